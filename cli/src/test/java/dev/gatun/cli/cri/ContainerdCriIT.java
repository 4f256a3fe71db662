package dev.gatun.cli.cri;

import dev.gatun.cli.testing.ContainerdLab;
import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.testing.ContainerdLab.Network;
import dev.gatun.cli.testing.ContainerdLab.Pod;
import dev.gatun.cli.cri.v1.PortMapping;
import dev.gatun.cli.cri.v1.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.gatun.cli.cni.PodmanCniIT.HOST_IP;
import static dev.gatun.cli.cni.PodmanCniIT.elements;
import static dev.gatun.cli.cni.PodmanCniIT.http;
import static dev.gatun.cli.cni.PodmanCniIT.udp;
import static dev.gatun.cli.testing.ContainerdLab.port;
import static dev.gatun.cli.testing.ContainerdLab.tcp;
import static dev.gatun.cli.testing.ContainerdLab.udp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Kubernetes hostPorts through real containerd ({@link ContainerdLab}), driven over CRI in the
 * kubelet's order, with gatun as the main plugin and chained after {@code bridge}: the ports
 * answer from an outside namespace (192.0.2.2 through the node's 192.0.2.1), to another pod
 * through the node's address (hairpin) and on the node's 127.0.0.1; Stop and Remove leave no
 * element, veth, IPAM reservation or sandbox namespace. Without a serve: each plugin call is a
 * JVM; {@link ContainerdCriServedIT} runs the same through a serve.
 */
@ExtendWith(FreshNamespaces.class)
public class ContainerdCriIT {

    static final String SECOND_HOST_IP = "192.0.2.3";
    static final String HOST_IP6 = "2001:db8:2::1";

    /** The containerd of the tests: the machine's (1.6); {@link Containerd17IT} the Debian 13 bed's. */
    ContainerdLab startLab(NetworkNamespace host, Network network, String... subnets) {
        return ContainerdLab.start(host, network, subnets);
    }

    /** The served variant starts a serve for the node's namespace here. */
    void useHost(NetworkNamespace host) {
    }

    /** The calls this lab's containerd made, checked by the served variant. */
    void used(ContainerdLab lab) throws InterruptedException {
    }

    /**
     * The served variant checks that the serve answered this sandbox's ADD with CNI code 101
     * (libcni keeps only the message for the runtime's error, and drops a failed plugin's stderr).
     */
    void refusedAsAConflict(String sandbox) throws InterruptedException {
    }

    /** The sandbox a failed RunPodSandbox names ({@code failed to setup network for sandbox "ID"}). */
    static String sandboxOf(StatusRuntimeException e) {
        Matcher m = Pattern.compile("for sandbox \\\\?\"([0-9a-f]{64})")
                .matcher(e.getStatus().getDescription());
        assertThat(m.find()).as("a sandbox id in " + e.getStatus().getDescription()).isTrue();
        return m.group(1);
    }

    static void outside(NetworkNamespace host, NetworkNamespace out) {
        PodmanCniIT.outside(host, out);
        Oracle.in(host, "ip", "addr", "add", SECOND_HOST_IP + "/24", "dev", "out0");
        Oracle.in(host, "ip", "addr", "add", HOST_IP6 + "/64", "dev", "out0", "nodad");
        Oracle.in(out, "ip", "addr", "add", "2001:db8:2::2/64", "dev", "out1", "nodad");
    }

    @Test
    void aPodsHostPortsWithGatunAsTheMainPlugin(NetworkNamespace host, NetworkNamespace out) throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.77.0.0/24")) {
            kubeletSequenceAnswersAndLeavesNothing(lab, host, out);
            used(lab);
        }
    }

    @Test
    void aPodsHostPortsWithGatunChainedAfterBridge(NetworkNamespace host, NetworkNamespace out) throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_AFTER_BRIDGE, "10.77.1.0/24")) {
            kubeletSequenceAnswersAndLeavesNothing(lab, host, out);
            used(lab);
        }
    }

    private static void kubeletSequenceAnswersAndLeavesNothing(ContainerdLab lab, NetworkNamespace host,
                                                              NetworkNamespace out) throws Exception {
        String linksBefore = veths(host);
        Pod web = lab.runPod("web", List.of(tcp(8080, 80), udp(5353, 53)));
        assertThat(http(out, HOST_IP, 8080)).isEqualTo("hello-from-web");
        assertThat(udp(out, HOST_IP, 5353)).isEqualTo("udp-from-web");
        assertThat(http(host, "127.0.0.1", 8080)).as("the node's own loopback").isEqualTo("hello-from-web");
        assertThat(elements(host)).contains("tcp . 8080").contains("udp . 5353");

        Pod sibling = lab.runPod("sibling", List.of());
        // Hairpin: another pod of the same bridge, through the node's published port.
        assertThat(http(lab.namespaceOf(sibling), HOST_IP, 8080)).isEqualTo("hello-from-web");
        assertThat(udp(lab.namespaceOf(sibling), HOST_IP, 5353)).isEqualTo("udp-from-web");

        lab.removePod(web);
        lab.removePod(sibling);
        assertThat(veths(host)).as("no veth left (before: " + linksBefore + ")").isEqualTo(linksBefore);
        nothingLeft(lab, host, "8080", "5353");
    }

    @Test
    void podsSharingAHostPortNumberAllAnswerAndARealConflictIsRefused(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.77.2.0/24")) {
            Pod first = lab.runPod("first", List.of(port(Protocol.TCP, 9000, 80, HOST_IP)));
            lab.runPod("second", List.of(port(Protocol.TCP, 9000, 80, SECOND_HOST_IP)));
            lab.runPod("third", List.of(udp(9000, 53)));
            assertThat(http(out, HOST_IP, 9000)).isEqualTo("hello-from-first");
            assertThat(http(out, SECOND_HOST_IP, 9000)).isEqualTo("hello-from-second");
            assertThat(udp(out, HOST_IP, 9000)).isEqualTo("udp-from-third");
            lab.runPod("sctp", List.of(port(Protocol.SCTP, 9000, 80, "")));
            assertThat(elements(host)).as("an SCTP hostPort beside the TCP and UDP ones").contains("sctp . 9000");
            List<String> reserved = lab.reservations();

            StatusRuntimeException refused = catchThrowableOfType(StatusRuntimeException.class,
                    () -> lab.runPod("fourth", List.of(port(Protocol.TCP, 9000, 80, HOST_IP))));
            assertThat(refused).as("RunPodSandbox of a pod whose hostPort is held").isNotNull();
            assertThat(refused.getStatus().getDescription()).as("containerd's error carries gatun's sentence")
                    .contains("plugin type=\"gatun\"").contains("9000").contains("by owner " + first.id());
            refusedAsAConflict(sandboxOf(refused));
            assertThat(lab.cri().listPodSandbox()).as("no sandbox of the refused pod is kept").hasSize(4);
            assertThat(lab.reservations()).as("the refused pod's address given back").isEqualTo(reserved);
            assertThat(http(out, HOST_IP, 9000)).as("the holder unchanged").isEqualTo("hello-from-first");
            used(lab);
        }
    }

    @Test
    void aDualStackPodsHostPortAnswersOverIpv6(NetworkNamespace host, NetworkNamespace out) throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.77.3.0/24", "fd00:77:3::/64")) {
            Pod web = lab.runPod("web6", List.of(tcp(8080, 80)));
            assertThat(web.ips()).as("one address of each family").hasSize(2);
            assertThat(web.ips().get(1)).contains(":");
            assertThat(http(out, "[" + HOST_IP6 + "]", 8080)).isEqualTo("hello-from-web6");
            assertThat(http(out, HOST_IP, 8080)).isEqualTo("hello-from-web6");
            assertThat(Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports6").stdout())
                    .contains("tcp . 8080");
            lab.removePod(web);
            assertThat(Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports6").stdout())
                    .doesNotContain("8080");
            assertThat(lab.reservations()).isEmpty();
            used(lab);
        }
    }

    @Test
    void containerdRestartedWhilePodsRunKeepsTheirPortsAndStillCleansUp(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.77.4.0/24")) {
            Pod web = lab.runPod("web", List.of(tcp(8080, 80), udp(5353, 53)));
            assertThat(http(out, HOST_IP, 8080)).isEqualTo("hello-from-web");
            lab.restartContainerd();
            assertThat(http(out, HOST_IP, 8080)).as("after containerd's restart").isEqualTo("hello-from-web");
            assertThat(udp(out, HOST_IP, 5353)).isEqualTo("udp-from-web");
            assertThat(lab.cri().listPodSandbox()).extracting(s -> s.getId()).containsExactly(web.id());

            // A kubelet retries StopPodSandbox until it succeeds: containerd then sends DEL again.
            lab.cri().stopPodSandbox(web.id());
            lab.cri().stopPodSandbox(web.id());
            assertThat(elements(host)).doesNotContain("8080").doesNotContain("5353");
            lab.removePod(web);
            nothingLeft(lab, host, "8080", "5353");
            used(lab);
        }
    }

    @Test
    void aPodWhoseNamespaceVanishedIsCleanedUpByStopPodSandbox(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = startLab(host, Network.GATUN_MAIN, "10.77.5.0/24")) {
            String linksBefore = veths(host);
            Pod web = lab.runPod("web", List.of(tcp(8080, 80)));
            assertThat(http(out, HOST_IP, 8080)).isEqualTo("hello-from-web");
            lab.killSandbox(web);
            assertThat(lab.sandboxNamespacesLeft()).as("the sandbox's namespace gone").isEmpty();

            // The kubelet's StopPodSandbox alone cleans up (its DEL has no namespace path to go by) ...
            lab.cri().stopPodSandbox(web.id());
            assertThat(elements(host)).as("after StopPodSandbox").doesNotContain("8080").doesNotContain(web.ip());
            assertThat(lab.reservations()).as("host-local's reservations after StopPodSandbox").isEmpty();
            assertThat(veths(host)).as("after StopPodSandbox").isEqualTo(linksBefore);
            // ... and the rest of the kubelet's sequence finds nothing more to do.
            lab.removePod(web);
            assertThat(veths(host)).isEqualTo(linksBefore);
            nothingLeft(lab, host, "8080");
            used(lab);
        }
    }

    /** What removing every pod leaves: no element of its ports, no address reserved, no sandbox or its namespace. */
    static void nothingLeft(ContainerdLab lab, NetworkNamespace host, String... ports) throws Exception {
        String left = elements(host);
        for (String port : ports) {
            assertThat(left).as("elements of port " + port).doesNotContain(port);
        }
        assertThat(lab.reservations()).as("host-local's reservations").isEmpty();
        assertThat(lab.sandboxNamespacesLeft()).as("sandbox namespaces").isEmpty();
        assertThat(lab.cri().listPodSandbox()).as("sandboxes").isEmpty();
    }

    /** The node's veth ends, whoever made them (gatun's are gv*, bridge's veth*). */
    static String veths(NetworkNamespace host) {
        return String.join("\n", Oracle.in(host, "ip", "-o", "link", "show").lines()
                .filter(l -> l.contains("veth") || l.contains(": gv")).map(l -> l.split(":")[1].strip()).sorted()
                .toList());
    }

    static List<PortMapping> fourPorts(int base) {
        return List.of(tcp(base, 80), tcp(base + 1, 81), tcp(base + 2, 82), udp(base + 3, 53));
    }
}
