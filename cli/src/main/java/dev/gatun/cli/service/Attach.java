package dev.gatun.cli.service;

import dev.gatun.driver.EndpointSpec;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

/** Attach a container namespace to a network. */
public record Attach(EndpointSpec spec) {

    /** From the words of a user; null for every default. */
    public static Attach of(String network, String containerNetns, String ip, String ip6, String ifname, String mac,
                            String owner) {
        Names.require(network, "network");
        NetworkNamespace ns = NetworkNamespace.of(Names.require(containerNetns, "container namespace"));
        return new Attach(EndpointSpec.on(network).container(ns).ifname(ifname)
                .ip(ip == null ? null : Prefix.address(ip)).ip6(ip6 == null ? null : Prefix.address(ip6))
                .mac(mac == null ? null : MacAddress.parse(mac)).owner(owner).build());
    }
}
