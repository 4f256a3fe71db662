package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;

import java.net.InetAddress;

/**
 * A container to attach. {@code ip} and {@code ip6} are chosen (lowest free) when null;
 * {@code ifname} defaults to eth0, {@code mac} to 02:42 plus the four bytes of the IPv4
 * address (as Docker does), {@code owner} to the IPv4 address.
 */
public record EndpointSpec(String network, NetworkNamespace container, String ifname, InetAddress ip, InetAddress ip6,
                           MacAddress mac, String owner) {

    public static EndpointSpec of(String network, NetworkNamespace container) {
        return new EndpointSpec(network, container, null, null, null, null, null);
    }
}
