package dev.gatun.driver;

import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

/**
 * What to make for a network. {@code subnet6}, {@code bridge}, {@code gateway4},
 * {@code gateway6}, {@code mac} and {@code mtu} may be null for defaults: bridge "gatun-" plus
 * the name when short enough, the first address of each subnet as gateway, a random
 * locally-administered MAC, the kernel's MTU.
 */
public record NetworkSpec(String name, String bridge, Prefix subnet4, java.net.InetAddress gateway4, Prefix subnet6,
                          java.net.InetAddress gateway6, MacAddress mac, Integer mtu, boolean icc, boolean internal,
                          boolean masquerade) {

    public static NetworkSpec of(String name, Prefix subnet4) {
        return new NetworkSpec(name, null, subnet4, null, null, null, null, null, true, false, true);
    }
}
