package dev.gatun.rtnl;

import dev.gatun.GatunException;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Network sysctls of one namespace. /proc/sys/net shows the namespace of the thread that
 * opens the file, so every read and write happens inside the namespace.
 */
public final class Sysctls {

    private static final Path NET = Path.of("/proc/sys/net");

    private final NetworkNamespace namespace;

    public Sysctls(NetworkNamespace namespace) {
        this.namespace = namespace;
    }

    /** net.ipv4.ip_forward: route IPv4 between interfaces. */
    public void setIpv4Forwarding(boolean on) {
        write(NET.resolve("ipv4/ip_forward"), on);
    }

    /** net.ipv4.conf.IFACE.route_localnet: let 127.0.0.0/8 be routed (needed for DNAT from localhost). */
    public void setRouteLocalnet(String iface, boolean on) {
        write(NET.resolve("ipv4/conf").resolve(InterfaceNames.check(iface)).resolve("route_localnet"), on);
    }

    /** net.ipv6.conf.all.forwarding. */
    public void setIpv6Forwarding(boolean on) {
        write(NET.resolve("ipv6/conf/all/forwarding"), on);
    }

    /** net.ipv6.conf.IFACE.accept_ra: 0 never, 1 when not forwarding, 2 always. */
    public void setAcceptRouterAdvertisements(String iface, int mode) {
        if (mode < 0 || mode > 2) {
            throw new dev.gatun.InvalidInputException("accept_ra is 0, 1 or 2, not " + mode);
        }
        write(NET.resolve("ipv6/conf").resolve(InterfaceNames.check(iface)).resolve("accept_ra"), Integer.toString(mode));
    }

    /**
     * net.ipv6.conf.IFACE.accept_dad: whether the interface first checks its IPv6 addresses
     * for duplicates (about a second during which its link-local address cannot be used).
     */
    public void setDuplicateAddressDetection(String iface, boolean on) {
        write(NET.resolve("ipv6/conf").resolve(InterfaceNames.check(iface)).resolve("accept_dad"), on);
    }

    /** net.ipv6.conf.IFACE.disable_ipv6. */
    public void setIpv6Disabled(String iface, boolean disabled) {
        write(NET.resolve("ipv6/conf").resolve(InterfaceNames.check(iface)).resolve("disable_ipv6"), disabled);
    }

    /** Reads a key such as "ipv4/ip_forward" under /proc/sys/net. */
    public String read(String key) {
        Path p = NET.resolve(key).normalize();
        if (!p.startsWith(NET)) {
            throw new dev.gatun.InvalidInputException("sysctl key " + key + " is outside net");
        }
        // procfs reports a size of 0, and Files.readString then returns only the first byte here.
        return namespace.call(() -> {
            try (InputStream in = Files.newInputStream(p)) {
                return new String(in.readAllBytes(), StandardCharsets.US_ASCII).strip();
            }
        });
    }

    private void write(Path file, boolean on) {
        write(file, on ? "1" : "0");
    }

    private void write(Path file, String value) {
        namespace.run(() -> {
            try {
                Files.writeString(file, value);
            } catch (IOException e) {
                throw new GatunException("write " + value + " to " + file + " in " + namespace.describe() + ": "
                        + e.getMessage(), e);
            }
        });
    }
}
