package dev.gatun.cli.cri;

import dev.gatun.cli.cri.ContainerdLab.Network;
import dev.gatun.cli.cri.ContainerdLab.Pod;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static dev.gatun.cli.cni.PodmanCniIT.HOST_IP;
import static dev.gatun.cli.cni.PodmanCniIT.elements;
import static dev.gatun.cli.cni.PodmanCniIT.http;
import static dev.gatun.cli.cni.PodmanCniIT.udp;
import static dev.gatun.cli.cri.ContainerdLab.tcp;
import static dev.gatun.cli.cri.ContainerdLab.udp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kubelet's sequence against Debian 13's containerd 1.7 (the test bed of today's engines,
 * {@link ContainerdLab#startInBed}), gatun as the main plugin and chained after {@code bridge}:
 * the hostPorts answer from outside, on the node's 127.0.0.1 and to another pod through the
 * node's address; Stop and Remove leave no element, veth or IPAM reservation.
 */
@ExtendWith(FreshNamespaces.class)
class Containerd17IT {

    @Test
    void aPodsHostPortsWithGatunAsTheMainPlugin(NetworkNamespace host, NetworkNamespace out) throws Exception {
        ContainerdCriIT.outside(host, out);
        try (ContainerdLab lab = ContainerdLab.startInBed(host, Network.GATUN_MAIN, "10.78.0.0/24")) {
            answersAndLeavesNothing(lab, host, out);
        }
    }

    @Test
    void aPodsHostPortsWithGatunChainedAfterBridge(NetworkNamespace host, NetworkNamespace out) throws Exception {
        ContainerdCriIT.outside(host, out);
        try (ContainerdLab lab = ContainerdLab.startInBed(host, Network.GATUN_AFTER_BRIDGE, "10.78.1.0/24")) {
            answersAndLeavesNothing(lab, host, out);
        }
    }

    private static void answersAndLeavesNothing(ContainerdLab lab, NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        assertThat(lab.runtimeVersion()).as("the bed's containerd").startsWith("1.7.");
        String linksBefore = ContainerdCriIT.veths(host);
        Pod web = lab.runPod("web", List.of(tcp(8080, 80), udp(5353, 53)));
        assertThat(http(out, HOST_IP, 8080)).isEqualTo("hello-from-web");
        assertThat(udp(out, HOST_IP, 5353)).isEqualTo("udp-from-web");
        assertThat(http(host, "127.0.0.1", 8080)).as("the node's own loopback").isEqualTo("hello-from-web");

        Pod sibling = lab.runPod("sibling", List.of());
        // Hairpin, from the sibling's namespace (its name lives in the bed's /run: reached through its process).
        String inSibling = "/proc/" + lab.sandboxPid(sibling) + "/ns/net";
        Oracle.Result hairpin = null;
        for (int i = 0; i < 50 && (hairpin == null || hairpin.exitCode() != 0); i++) {
            if (hairpin != null) {
                Thread.sleep(100);
            }
            hairpin = Oracle.run(List.of("nsenter", "--net=" + inSibling, "curl", "-s", "-m", "3",
                    "http://" + HOST_IP + ":8080/"));
        }
        assertThat(hairpin.stdout().strip()).as(hairpin.stderr()).isEqualTo("hello-from-web");

        lab.removePod(web);
        lab.removePod(sibling);
        assertThat(elements(host)).doesNotContain("8080").doesNotContain("5353");
        assertThat(ContainerdCriIT.veths(host)).isEqualTo(linksBefore);
        assertThat(lab.reservations()).isEmpty();
        assertThat(lab.cri().listPodSandbox()).isEmpty();
    }
}
