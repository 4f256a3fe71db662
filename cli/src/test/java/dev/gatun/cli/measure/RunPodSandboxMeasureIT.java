package dev.gatun.cli.measure;

import dev.gatun.cli.testing.ContainerdLab;
import dev.gatun.cli.testing.ContainerdLab.Network;
import dev.gatun.cli.cri.v1.LinuxPodSandboxConfig;
import dev.gatun.cli.cri.v1.LinuxSandboxSecurityContext;
import dev.gatun.cli.cri.v1.NamespaceMode;
import dev.gatun.cli.cri.v1.NamespaceOption;
import dev.gatun.cli.cri.v1.PodSandboxConfig;
import dev.gatun.cli.cri.v1.PortMapping;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.UnaryOperator;

import static dev.gatun.cli.testing.ContainerdLab.tcp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: the wall time of one RunPodSandbox over CRI with 1 and
 * with 32 hostPorts, then with 32 when 100 pods of 8 hostPorts each already run, for the
 * reference ({@code bridge} + {@code portmap}), for gatun as the main plugin with a serve, for
 * {@code bridge} alone, which ignores the hostPorts (containerd, runc, a veth and IPAM), and for
 * containerd alone: a pod on the node's network, for which the CRI runs no CNI at all (the share
 * of containerd and runc that no network plugin can remove; its hostPorts mean nothing there).
 * Each side has a node namespace and a containerd of its own (same binary, same config but the
 * conflist: containerd 1.6 reads one conflist per CRI); the sides take turns sample by sample,
 * after one unmeasured run each; each measured sandbox is stopped and removed (unmeasured) before
 * the next. Prints the medians and ratios; asserts only that every call succeeded.
 *
 * <pre>
 * mvn -o verify -pl cli -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=RunPodSandboxMeasureIT -Dgatun.measure=true [-Dgatun.measure.samples=7]
 * </pre>
 */
@ExtendWith(FreshNamespaces.class)
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
class RunPodSandboxMeasureIT {

    /** {@code bridge} alone, its hostPorts ignored: what containerd, runc and a veth cost without any port work. */
    private static final String FLOOR = "floor: bridge alone, no hostPorts";
    /** A pod on the node's network: no CNI is run, so this is what containerd and runc cost by themselves. */
    private static final String NO_CNI = "containerd alone: node network, no CNI";

    /** A side of the measurement: a lab, and how its sandboxes differ from the others'. */
    private record Side(ContainerdLab lab, UnaryOperator<PodSandboxConfig> shape) {}
    private static final int PRESENT_PODS = 100;
    private static final int PRESENT_PORTS = 8;

    @Test
    void runPodSandboxWithOneAndThirtyTwoHostPortsEmptyAndWithAHundredPodsPresent(NetworkNamespace refNode,
                                                                                  NetworkNamespace gatunNode,
                                                                                  NetworkNamespace floorNode) {
        int samples = Integer.getInteger("gatun.measure.samples", 7);
        Map<String, List<Long>> times = new LinkedHashMap<>();
        try (GatunServe serve = GatunServe.start(gatunNode.name(), null, "--log-requests");
             ContainerdLab ref = ContainerdLab.start(refNode, Network.PORTMAP_AFTER_BRIDGE, "10.93.0.0/16");
             ContainerdLab gatun = ContainerdLab.start(gatunNode, Network.GATUN_MAIN, "10.94.0.0/16");
             ContainerdLab floor = ContainerdLab.start(floorNode, Network.BRIDGE_ALONE, "10.95.0.0/16")) {
            Map<String, Side> sides = new LinkedHashMap<>();
            sides.put("bridge + portmap", new Side(ref, c -> c));
            sides.put("gatun, served", new Side(gatun, c -> c));
            sides.put(FLOOR, new Side(floor, c -> c));
            sides.put(NO_CNI, new Side(floor, RunPodSandboxMeasureIT::onTheNodesNetwork));
            measure(sides, samples, new int[] {1, 32}, "", times);
            List.of(ref, gatun, floor).forEach(RunPodSandboxMeasureIT::fill);
            measure(sides, samples, new int[] {32}, ", " + PRESENT_PODS + " pods present", times);
            assertThat(serve.stderr()).contains("ran CNI ADD");
            // Before 200 sandboxes are torn down: a failure there must not lose the figures.
            report(samples, times);
        }
    }

    private static void report(int samples, Map<String, List<Long>> times) {
        StringBuilder report = new StringBuilder("RunPodSandbox, " + samples + " samples per side, median / min / max ms\n");
        Map<String, Double> medians = MeasuredRuns.medians(times, report, 55);
        for (String what : List.of("1 hostPort(s)", "32 hostPort(s)", "32 hostPort(s), " + PRESENT_PODS + " pods present")) {
            double gatunMs = medians.get("gatun, served, " + what);
            double floorMs = medians.get(FLOOR + ", " + what);
            double aloneMs = medians.get(NO_CNI + ", " + what);
            double refMs = medians.get("bridge + portmap, " + what);
            report.append(String.format("  %s: bridge + portmap / gatun %.2f; bridge + portmap / floor %.2f; "
                            + "bridge + portmap / containerd alone %.2f; gatun - containerd alone %.1f ms%n", what,
                    refMs / gatunMs, refMs / floorMs, refMs / aloneMs, gatunMs - aloneMs));
        }
        System.out.print(report);
    }

    /** {@code config} with the pod on the node's network namespace. */
    private static PodSandboxConfig onTheNodesNetwork(PodSandboxConfig config) {
        // As the kubelet sends it: no hostname of its own (the node's is kept without a UTS namespace).
        return config.toBuilder().clearHostname().setLinux(LinuxPodSandboxConfig.newBuilder().setSecurityContext(
                LinuxSandboxSecurityContext.newBuilder().setNamespaceOptions(
                        NamespaceOption.newBuilder().setNetwork(NamespaceMode.NODE)))).build();
    }

    private static void measure(Map<String, Side> sides, int samples, int[] portCounts, String suffix,
                                Map<String, List<Long>> times) {
        for (int round = -1; round < samples; round++) {
            for (int ports : portCounts) {
                for (Map.Entry<String, Side> side : sides.entrySet()) {
                    List<PortMapping> mappings = new ArrayList<>();
                    for (int k = 0; k < ports; k++) {
                        mappings.add(tcp(30000 + k, 80 + k));
                    }
                    ContainerdLab lab = side.getValue().lab();
                    var config = side.getValue().shape().apply(lab.sandboxConfig("m" + round + "-" + ports, mappings));
                    long start = System.nanoTime();
                    String id = lab.runSandbox(config);
                    long took = System.nanoTime() - start;
                    lab.cri().stopPodSandbox(id);
                    lab.cri().removePodSandbox(id);
                    if (round >= 0) {
                        times.computeIfAbsent(side.getKey() + ", " + ports + " hostPort(s)" + suffix,
                                k -> new ArrayList<>()).add(took);
                    }
                }
            }
        }
    }

    /** The pods already present: sandboxes of 8 hostPorts each, started 10 at a time (unmeasured). */
    private static void fill(ContainerdLab lab) {
        List<CompletableFuture<String>> runs = new ArrayList<>();
        try (ExecutorService kubelets = Executors.newFixedThreadPool(10)) {
            for (int p = 0; p < PRESENT_PODS; p++) {
                List<PortMapping> mappings = new ArrayList<>();
                for (int k = 0; k < PRESENT_PORTS; k++) {
                    mappings.add(tcp(40000 + p * PRESENT_PORTS + k, 80 + k));
                }
                var config = lab.sandboxConfig("present" + p, mappings);
                runs.add(CompletableFuture.supplyAsync(() -> lab.runSandbox(config), kubelets));
            }
        }
        runs.forEach(r -> Bounded.get(r, "a pod already present"));
    }
}
