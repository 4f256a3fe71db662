package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;

import java.util.List;

/**
 * The engine contract for engines that make a network as its first container comes and check
 * their containers' interfaces (CNI, netavark): the container's setup then changes the packet
 * filter once.
 */
public interface ContainerSetup extends NetworkDriver {

    /**
     * {@link #createNetwork} at a network's first container: the bridge now, and its
     * packet-filter entries (masquerade, icc, internal, its place among gatun's networks) in the
     * transaction of the {@link #publishAll} that follows, with gatun's table if the host has none
     * yet. Until then the bridge is not filtered at all, so the caller starts nothing on it before
     * that publishAll, and a setup without ports that finds the network calls
     * {@link #completeNetwork} (this one may die before its ports). Where the packet filter has no
     * transactions (iptables) the entries go in now, as with createNetwork.
     */
    Network createNetworkForPublish(NetworkSpec spec);

    /**
     * Adds a network's packet-filter entries where they are missing (with gatun's table if it is
     * missing too): for a network made by {@link #createNetworkForPublish} whose publishAll failed
     * before its commit, or that a setup without ports finds. Where they are all in place the
     * kernel changes nothing (no generation, no notification); with iptables it does nothing.
     */
    void completeNetwork(String name);

    /**
     * What of an attached endpoint is missing in the kernel: its host end on the network's
     * bridge, its interface in {@code container}, and that interface's addresses. One phrase per
     * missing thing; empty when it is whole.
     */
    List<String> verify(Endpoint endpoint, NetworkNamespace container);
}
