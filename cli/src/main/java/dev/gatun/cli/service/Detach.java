package dev.gatun.cli.service;

import dev.gatun.netns.NetworkNamespace;

/** Detach a container's interface ({@code ifname} null: eth0) from a network. */
public record Detach(String network, String containerName, NetworkNamespace container, String ifname) {

    /** From the words of a user; {@code containerNetns} is a name under /run/netns or a path. */
    public static Detach of(String network, String containerNetns, String ifname) {
        Names.require(network, "network");
        return new Detach(network, containerNetns, NetworkNamespace.of(Names.require(containerNetns, "container namespace")),
                ifname);
    }
}
