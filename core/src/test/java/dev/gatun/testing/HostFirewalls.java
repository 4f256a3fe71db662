package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.util.List;

/**
 * Filter tables as other tools leave a host, made with the real iptables binary in a test's
 * namespace: fixtures for tests of gatun beside them.
 */
public final class HostFirewalls {

    private HostFirewalls() {}

    /** The chains and rules Docker 20.10 makes for its default bridge in iptables mode, FORWARD policy DROP. */
    public static final List<String> DOCKER = List.of(
            "-N DOCKER", "-N DOCKER-ISOLATION-STAGE-1", "-N DOCKER-ISOLATION-STAGE-2", "-N DOCKER-USER",
            "-P FORWARD DROP",
            "-A FORWARD -j DOCKER-USER",
            "-A FORWARD -j DOCKER-ISOLATION-STAGE-1",
            "-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
            "-A FORWARD -o docker0 -j DOCKER",
            "-A FORWARD -i docker0 ! -o docker0 -j ACCEPT",
            "-A FORWARD -i docker0 -o docker0 -j ACCEPT",
            "-A DOCKER-ISOLATION-STAGE-1 -i docker0 ! -o docker0 -j DOCKER-ISOLATION-STAGE-2",
            "-A DOCKER-ISOLATION-STAGE-1 -j RETURN",
            "-A DOCKER-ISOLATION-STAGE-2 -o docker0 -j DROP",
            "-A DOCKER-ISOLATION-STAGE-2 -j RETURN",
            "-A DOCKER-USER -j RETURN");

    /**
     * ufw's forward chains with its default forward policy DROP (its before.rules for FORWARD,
     * abridged to the rules that decide forwarded traffic).
     */
    public static final List<String> UFW = List.of(
            "-P FORWARD DROP",
            "-N ufw-before-logging-forward", "-N ufw-before-forward", "-N ufw-after-forward",
            "-N ufw-after-logging-forward", "-N ufw-reject-forward", "-N ufw-track-forward", "-N ufw-user-forward",
            "-A FORWARD -j ufw-before-logging-forward",
            "-A FORWARD -j ufw-before-forward",
            "-A FORWARD -j ufw-after-forward",
            "-A FORWARD -j ufw-after-logging-forward",
            "-A FORWARD -j ufw-reject-forward",
            "-A FORWARD -j ufw-track-forward",
            "-A ufw-before-forward -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
            "-A ufw-before-forward -p icmp -m icmp --icmp-type 3 -j ACCEPT",
            "-A ufw-before-forward -j ufw-user-forward");

    /** Runs each of {@code lines} as {@code IPTABLES -w LINE} in {@code ns} ("iptables-nft", "ip6tables-legacy", ...). */
    public static void apply(NetworkNamespace ns, String iptables, List<String> lines) {
        for (String line : lines) {
            Oracle.in(ns, (iptables + " -w " + line).split(" "));
        }
    }
}
