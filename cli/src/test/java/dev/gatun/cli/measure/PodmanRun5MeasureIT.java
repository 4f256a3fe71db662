package dev.gatun.cli.measure;

import dev.gatun.cli.testing.Podman5Lab;
import dev.gatun.cli.testing.DebianBed;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: the wall time of {@code podman run -d} (Podman 5.4,
 * netavark 1.14, from the test bed) of one container with 1 and with 32 published ports, on
 * three networks of one Podman: gatun's plugin with a serve running as gatun.service runs it
 * (warmed up before its ready line; the C client forwards each call), and netavark's own bridge with its nftables and with its iptables firewall driver. All
 * three with {@code --disable-dns} (gatun's networks have no DNS; aardvark-dns would cost the
 * others a process). The sides take turns sample by sample, after two unmeasured runs each; each
 * container is removed (unmeasured) before the next run. Then again with 100 containers of 8
 * published ports each running on every side's network (netavark lists its whole table at every
 * setup). A fourth side, {@code --network none} (no plugin, no firewall, no port), is Podman's own
 * floor. Prints medians and ratios; asserts only that every run succeeded.
 *
 * <pre>
 * mvn verify -pl cli -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=PodmanRun5MeasureIT -Dgatun.measure=true [-Dgatun.measure.samples=9] [-Dgatun.measure.running=100]
 * </pre>
 */
@ExtendWith(FreshNamespaces.class)
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
public class PodmanRun5MeasureIT {

    private static final String FLOOR = "podman alone (--network none)";

    private record Side(String name, String network, String subnet, Path conf, String driver, int portBase) {}

    @Test
    @Timeout(value = 2, unit = TimeUnit.HOURS)
    void podmanRunWithOneAndThirtyTwoPorts(NetworkNamespace host) {
        int samples = Integer.getInteger("gatun.measure.samples", 9);
        int running = Integer.getInteger("gatun.measure.running", 100);
        Map<String, List<Long>> times = new LinkedHashMap<>();
        try (Podman5Lab lab = Podman5Lab.start(host, Podman5Lab.Gatun.SERVED_WARMED_UP)) {
            Path plain = lab.dir.resolve("containers.conf");
            List<Side> sides = List.of(
                    new Side("gatun (served)", "gt", "10.94.0.0/16", plain, "gatun", 20000),
                    new Side("netavark nftables", "nvn", "10.95.0.0/16", lab.confWithFirewall("nftables"), "bridge", 30000),
                    new Side("netavark iptables", "nvi", "10.96.0.0/16", lab.confWithFirewall("iptables"), "bridge", 40000),
                    new Side(FLOOR, "none", null, plain, null, 0));
            for (Side s : sides.subList(0, 3)) {
                lab.podmanOk("network", "create", "-d", s.driver(), "--disable-dns", "--subnet", s.subnet(), s.network());
            }
            rounds(lab, sides, 2, null, "warm-up");
            rounds(lab, sides, samples, times, "0 running");
            for (Side s : sides.subList(0, 3)) {
                for (int c = 0; c < running; c++) {
                    List<String> publish = new ArrayList<>();
                    for (int k = 0; k < 8; k++) {
                        publish.add((s.portBase() + 5000 + c * 8 + k) + ":" + (80 + k));
                    }
                    DebianBed.Result r = run(lab, s, "bg-" + s.network() + "-" + c, publish);
                    assertThat(r.code()).as(r.err()).isZero();
                }
            }
            rounds(lab, sides, samples, times, running + " running");
        }
        report(times, samples, running);
    }

    private static DebianBed.Result run(Podman5Lab lab, Side s, String name, List<String> publish) {
        List<String> args = new ArrayList<>(List.of("run", "-d", "--name", name, "--network", s.network()));
        for (String p : s.driver() == null ? List.<String>of() : publish) {
            args.add("-p");
            args.add(p);
        }
        args.addAll(List.of(Podman5Lab.IMAGE, "sleep", "3600"));
        return lab.podmanWith(s.conf(), args.toArray(String[]::new));
    }

    private static void rounds(Podman5Lab lab, List<Side> sides, int n, Map<String, List<Long>> times, String phase) {
        for (int i = 0; i < n; i++) {
            for (int ports : new int[] {1, 32}) {
                for (Side s : sides) {
                    List<String> publish = new ArrayList<>();
                    for (int k = 0; k < ports; k++) {
                        publish.add((s.portBase() + k) + ":" + (80 + k));
                    }
                    long start = System.nanoTime();
                    DebianBed.Result r = run(lab, s, "m", publish);
                    long took = System.nanoTime() - start;
                    assertThat(r.code()).as(s.name() + ": " + r.err()).isZero();
                    lab.podmanOk("rm", "-f", "-t", "0", "m");
                    if (times != null) {
                        times.computeIfAbsent(phase + ", " + ports + " port(s), " + s.name(), k -> new ArrayList<>()).add(took);
                    }
                }
            }
        }
    }

    private static void report(Map<String, List<Long>> times, int samples, int running) {
        StringBuilder out = new StringBuilder("podman run -d (Podman 5.4, netavark 1.14), " + samples
                + " samples per side, median / min / max ms\n");
        Map<String, Double> medians = new LinkedHashMap<>();
        times.forEach((side, ns) -> {
            List<Long> sorted = ns.stream().sorted().toList();
            double median = sorted.get(sorted.size() / 2) / 1e6;
            medians.put(side, median);
            out.append(String.format("  %-55s %8.1f %8.1f %8.1f%n", side, median, sorted.getFirst() / 1e6,
                    sorted.getLast() / 1e6));
        });
        for (String phase : List.of("0 running", running + " running")) {
            for (int ports : new int[] {1, 32}) {
                String key = phase + ", " + ports + " port(s), ";
                double g = medians.get(key + "gatun (served)");
                double floor = medians.get(key + FLOOR);
                out.append(String.format("  %s, %d port(s): netavark nftables / gatun %.2fx, netavark iptables / gatun %.2fx; "
                                + "above Podman's floor: gatun %.0f ms, nftables %.0f ms, iptables %.0f ms%n",
                        phase, ports, medians.get(key + "netavark nftables") / g, medians.get(key + "netavark iptables") / g,
                        g - floor, medians.get(key + "netavark nftables") - floor,
                        medians.get(key + "netavark iptables") - floor));
            }
        }
        System.out.print(out);
    }
}
