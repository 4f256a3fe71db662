package dev.gatun.cli.measure;

import dev.gatun.cli.testing.PodmanLab;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: the wall time of {@code podman run -d} of one container
 * with 1 and with 32 published ports, on Podman's own network (bridge + portmap + firewall +
 * tuning, the reference) and on gatun as the main plugin, without a serve (a JVM per plugin call)
 * and with one (the C client). One lab, one host namespace; the sides take turns sample by sample,
 * after one unmeasured run each; each container is removed (unmeasured) before the next run.
 * Prints the medians and ratios; asserts only that every run succeeded.
 *
 * <pre>
 * mvn -o verify -pl cli -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=PodmanRunMeasureIT -Dgatun.measure=true [-Dgatun.measure.samples=7]
 * </pre>
 */
@ExtendWith(FreshNamespaces.class)
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
class PodmanRunMeasureIT {

    @Test
    void podmanRunWithOneAndThirtyTwoPorts(NetworkNamespace host) {
        int samples = Integer.getInteger("gatun.measure.samples", 7);
        Map<String, List<Long>> times = new LinkedHashMap<>();
        try (PodmanLab lab = PodmanLab.start(host)) {
            lab.podmanNetwork("ref", "10.91.0.0/24", false);
            lab.gatunNetwork("gt", "10.92.0.0/24");
            // Without a serve: the reference against a JVM per call.
            measure(lab, samples, times, "reference", "ref", "gatun, no serve", "gt");
            try (GatunServe serve = GatunServe.start(host.name(), null, "--log-requests")) {
                measure(lab, samples, times, "reference (serve phase)", "ref", "gatun, serve running", "gt");
                assertThat(serve.stderr()).contains("ran CNI ADD");
            }
        }
        StringBuilder report = new StringBuilder("podman run -d, " + samples + " samples per side, median / min / max ms\n");
        Map<String, Double> medians = MeasuredRuns.medians(times, report, 40);
        for (int ports : new int[] {1, 32}) {
            double ref = medians.get("reference, " + ports + " port(s)");
            double refServePhase = medians.get("reference (serve phase), " + ports + " port(s)");
            report.append(String.format("  %d port(s): reference / gatun no serve %.2f; reference (same phase) / gatun serve %.2f%n",
                    ports, ref / medians.get("gatun, no serve, " + ports + " port(s)"),
                    refServePhase / medians.get("gatun, serve running, " + ports + " port(s)")));
        }
        System.out.print(report);
    }

    private static void measure(PodmanLab lab, int samples, Map<String, List<Long>> times, String refSide,
                                String refNetwork, String gatunSide, String gatunNetwork) {
        for (int round = -1; round < samples; round++) {
            for (int ports : new int[] {1, 32}) {
                for (String[] side : List.of(new String[] {refSide, refNetwork}, new String[] {gatunSide, gatunNetwork})) {
                    List<String> publish = new ArrayList<>();
                    for (int k = 0; k < ports; k++) {
                        publish.add((30000 + k) + ":" + (80 + k));
                    }
                    long start = System.nanoTime();
                    PodmanLab.Result r = lab.runDetached("m", side[1], publish, "sleep", "3600");
                    long took = System.nanoTime() - start;
                    assertThat(r.code()).as(side[0] + ": " + r.err()).isZero();
                    lab.podmanOk("rm", "-f", "-t", "0", "m");
                    if (round >= 0) {
                        times.computeIfAbsent(side[0] + ", " + ports + " port(s)", k -> new ArrayList<>()).add(took);
                    }
                }
            }
        }
    }
}
