package dev.gatun.cli.cri;

import dev.gatun.cli.testing.ContainerdLab;
import dev.gatun.cli.testing.ContainerdLab.Network;
import dev.gatun.cli.testing.ContainerdLab.Pod;
import dev.gatun.cli.cri.v1.PortMapping;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import io.grpc.StatusRuntimeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static dev.gatun.cli.cni.PodmanCniIT.HOST_IP;
import static dev.gatun.cli.cni.PodmanCniIT.elements;
import static dev.gatun.cli.cni.PodmanCniIT.http;
import static dev.gatun.cli.cni.PodmanCniIT.udp;
import static dev.gatun.cli.testing.ContainerdLab.tcp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ContainerdCriIT} with a {@code gatun serve} for the node's namespace, as a node runs it:
 * every ADD of every pod must have gone through the serve. Here too, what a busy node does: 50
 * pods of 4 hostPorts started at once, and the serve killed with SIGKILL while 20 pods start.
 */
class ContainerdCriServedIT extends ContainerdCriIT {

    private GatunServe serve;

    @Override
    void useHost(NetworkNamespace host) {
        serve = GatunServe.start(host.name(), null, "--log-requests");
    }

    @Override
    void used(ContainerdLab lab) throws InterruptedException {
        List<String> run = lab.sandboxesRun();
        assertThat(run).as("the test ran pods").isNotEmpty();
        for (String id : run) {
            // Its log is read from a pipe: give the last line a moment to arrive.
            for (int i = 0; i < 100 && !serve.stderr().contains("ran CNI ADD " + id); i++) {
                Thread.sleep(20);
            }
            assertThat(serve.stderr()).as("the serve ran the ADD of sandbox " + id).contains("ran CNI ADD " + id);
        }
    }

    @Override
    void refusedAsAConflict(String sandbox) throws InterruptedException {
        String line = "ran CNI ADD " + sandbox + ": exit 1 (CNI error 101)";
        for (int i = 0; i < 100 && !serve.stderr().contains(line); i++) {
            Thread.sleep(20);
        }
        assertThat(serve.stderr()).as("the serve's answer to the refused ADD").contains(line);
    }

    @AfterEach
    void stopServe() {
        if (serve != null) {
            serve.close();
            serve = null;
        }
    }

    @Test
    void fiftyPodsWithFourHostPortsEachStartedAtOnceAllAnswer(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = ContainerdLab.start(host, Network.GATUN_MAIN, "10.77.6.0/24")) {
            List<CompletableFuture<Pod>> runs = new ArrayList<>();
            try (ExecutorService kubelets = Executors.newFixedThreadPool(50)) {
                for (int p = 0; p < 50; p++) {
                    String name = "many" + p;
                    List<PortMapping> ports = fourPorts(20000 + p * 4);
                    runs.add(CompletableFuture.supplyAsync(() -> lab.runPod(name, ports), kubelets));
                }
            }
            for (int p = 0; p < 50; p++) {
                Pod pod = Bounded.get(runs.get(p), "the kubelet's sequence of pod many" + p);
                int base = 20000 + p * 4;
                for (int k = 0; k < 3; k++) {
                    assertThat(http(out, HOST_IP, base + k)).as(pod.name() + " tcp " + (base + k))
                            .isEqualTo("hello-from-" + pod.name());
                }
                assertThat(udp(out, HOST_IP, base + 3)).as(pod.name() + " udp " + (base + 3))
                        .isEqualTo("udp-from-" + pod.name());
            }
            used(lab);
            for (CompletableFuture<Pod> r : runs) {
                lab.removePod(r.join());
            }
            assertThat(elements(host)).doesNotContain("comment");
            assertThat(lab.reservations()).isEmpty();
            assertThat(lab.sandboxNamespacesLeft()).isEmpty();
        }
    }

    /**
     * SIGKILL to the serve once the first of 20 concurrent RunPodSandbox calls was served: the
     * calls it held fail (containerd then sends DEL, which the plugin runs in a JVM of its own),
     * the later ones run in JVMs; each pod either answers on its port or left nothing behind.
     */
    @Test
    void aServeKilledDuringTwentyConcurrentRunPodSandboxCallsLeavesEachPodWholeOrGone(NetworkNamespace host,
                                                                                    NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (ContainerdLab lab = ContainerdLab.start(host, Network.GATUN_MAIN, "10.77.7.0/24")) {
            List<CompletableFuture<Pod>> runs = new ArrayList<>();
            int servedBeforeKill;
            try (ExecutorService kubelets = Executors.newFixedThreadPool(20)) {
                int mark = serve.stderrMark();
                for (int p = 0; p < 20; p++) {
                    String name = "k" + p;
                    List<PortMapping> ports = List.of(tcp(21000 + p, 80));
                    runs.add(CompletableFuture.supplyAsync(() -> lab.runPod(name, ports), kubelets));
                }
                assertThat(serve.awaitStderr(mark, "ran CNI ADD", Duration.ofSeconds(120)))
                        .as("a first ADD served").isTrue();
                serve.kill();
                // SIGKILL leaves the socket files: a later namespace with this inode would find it.
                Files.deleteIfExists(Path.of("/run/gatun/netns-" + host.inode() + ".sock"));
                Files.deleteIfExists(Path.of("/run/gatun/netns-" + host.inode() + ".calls.sock"));
                servedBeforeKill = (int) serve.stderr().lines().filter(l -> l.contains("ran CNI ADD")).count();
            }
            assertThat(servedBeforeKill).as("the kill came while pods were still starting").isLessThan(20);
            List<Integer> answering = new ArrayList<>();
            List<Integer> failed = new ArrayList<>();
            List<String> reasons = new ArrayList<>();
            for (int p = 0; p < 20; p++) {
                Pod pod;
                try {
                    pod = Bounded.get(runs.get(p), "the kubelet's sequence of pod k" + p);
                } catch (StatusRuntimeException refused) {
                    failed.add(p);
                    reasons.add(refused.getStatus().getDescription());
                    continue;
                }
                assertThat(http(out, HOST_IP, 21000 + p)).isEqualTo("hello-from-" + pod.name());
                answering.add(p);
            }
            System.out.println("serve killed after " + servedBeforeKill + " ADDs: " + answering.size()
                    + " pods answer, " + failed.size() + " failed: " + reasons);
            assertThat(lab.cri().listPodSandbox()).as("a sandbox for each pod that answers, none for the others")
                    .hasSize(answering.size());
            assertThat(lab.reservations()).as("host-local's reservations").hasSize(answering.size());
            String mapped = elements(host);
            for (int p : failed) {
                assertThat(mapped).as("no mapping of failed pod k" + p).doesNotContain("tcp . " + (21000 + p) + " ");
            }
            assertThat(lab.sandboxNamespacesLeft()).hasSize(answering.size());
            assertThat(veths(host).lines().filter(l -> l.startsWith("gv")).count()).as("a veth for each pod that answers")
                    .isEqualTo(answering.size());
            // A call the kill cut short says so (CNI code 11; libcni passes on only the sentence).
            assertThat(reasons).as("why the failed calls failed").allSatisfy(r -> assertThat(r).contains("try again"));
        }
    }
}
