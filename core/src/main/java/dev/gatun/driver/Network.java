package dev.gatun.driver;

import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.List;

/**
 * A network as it exists in the kernel: its bridge, subnets with their gateways, and options;
 * {@code counters}: its published ports count their traffic.
 */
public record Network(String name, String bridge, MacAddress mac, List<Prefix> subnets, List<InetAddress> gateways,
                      boolean icc, boolean internal, boolean masquerade, int mtu, boolean counters) {

    /** A network without counters. */
    public Network(String name, String bridge, MacAddress mac, List<Prefix> subnets, List<InetAddress> gateways,
                   boolean icc, boolean internal, boolean masquerade, int mtu) {
        this(name, bridge, mac, subnets, gateways, icc, internal, masquerade, mtu, false);
    }
}
