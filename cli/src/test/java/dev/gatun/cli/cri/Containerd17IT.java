package dev.gatun.cli.cri;

import dev.gatun.cli.testing.ContainerdLab;
import dev.gatun.cli.testing.ContainerdLab.Network;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every test of {@link ContainerdCriIT} against Debian 13's containerd 1.7 (the test bed of
 * today's engines, {@link ContainerdLab#startInBed}), without a serve: the kubelet's sequence in
 * main mode and chained after {@code bridge}, pods sharing a hostPort number, a real conflict,
 * a dual-stack pod, containerd restarted, a pod whose namespace vanished.
 */
class Containerd17IT extends ContainerdCriIT {

    @Override
    ContainerdLab startLab(NetworkNamespace host, Network network, String... subnets) {
        return ContainerdLab.startInBed(host, network, subnets);
    }

    @Test
    void theRuntimeIsTheBedsContainerd17(NetworkNamespace host) {
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.78.0.0/24")) {
            assertThat(lab.runtimeVersion()).as("the bed's containerd").startsWith("1.7.");
        }
    }
}
