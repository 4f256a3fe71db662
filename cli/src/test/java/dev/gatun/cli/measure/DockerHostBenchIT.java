package dev.gatun.cli.measure;

import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.cli.testing.Probe;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: {@code docker run -d} of a container with PORTS published
 * ports on an unchanged Docker host, Docker's own iptables mode against the same dockerd build
 * with {@code --iptables=false} and {@code gatun serve --docker}, and beside them that dockerd
 * alone (its firewall off, no serve: dockerd's own share of a start, which no firewall can
 * remove; its ports answer nobody), first with no other container running, then with RUNNING containers of PORTS ports each already running on both; for each
 * userland-proxy setting asked (the sides always share it). Three labs side by side, samples
 * taken in turns, each sample's container removed (unmeasured) before the next; the setup of the
 * RUNNING containers is timed too, one container on each side in turn. Prints medians, ratios
 * and setup times; asserts only that every run succeeded and that gatun published every port.
 *
 * <pre>
 * mvn -o verify -pl cli -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=DockerHostBenchIT \
 *     -Dgatun.measure=true [-Dgatun.measure.running=100] [-Dgatun.measure.ports=32] [-Dgatun.measure.samples=5] \
 *     [-Dgatun.measure.proxy=off,on] [-Dgatun.measure.bed=true (dockerd 26 from the Debian 13 test bed)]
 * </pre>
 */
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
class DockerHostBenchIT {

    private static final int BACKGROUND_FIRST_PORT = 20000;
    private static final int SAMPLE_FIRST_PORT = 60000;

    /** One side of a run: its lab, and for gatun's the serve following it. */
    private record Side(String name, DockerLab lab, GatunServe serve) implements AutoCloseable {
        @Override
        public void close() {
            try {
                if (serve != null) {
                    serve.close();
                }
            } finally {
                lab.close();
            }
        }
    }

    private static List<String> runArgs(String name, int firstPort, int ports) {
        List<String> cmd = new ArrayList<>(List.of("run", "-d", "--name", name));
        for (int k = 0; k < ports; k++) {
            cmd.addAll(List.of("-p", (firstPort + k) + ":" + (80 + k)));
        }
        cmd.addAll(List.of(DockerLab.IMAGE, "sleep", "3600"));
        return cmd;
    }

    /** {@code docker run -d}'s wall time in ns; checked. */
    private static long timedRun(Side side, String name, int firstPort, int ports) {
        List<String> args = runArgs(name, firstPort, ports);
        long t0 = System.nanoTime();
        DockerLab.Result r = side.lab().docker(args.toArray(String[]::new));
        long took = System.nanoTime() - t0;
        assertThat(r.code()).as("%s: docker run %s: %s", side.name(), name, r.err()).isZero();
        return took;
    }

    private static void awaitPublished(Side side, String name, int ports) {
        if (side.serve() == null) {
            return;
        }
        String owner = "docker:" + side.lab().dockerOk("inspect", "-f", "{{.Id}}", name).out().strip();
        assertThat(Probe.poll(Probe.SERVICE_START, () -> GatunCli.mappingsOf(side.lab().namespace(), owner).size() == ports))
                .as("%s: gatun published the %d ports of %s; the serve: %s", side.name(), ports, name, side.serve().stderr())
                .isTrue();
    }

    /** {@code samples} runs on each side in turn (after one unmeasured run each); medians in ms by side. */
    private static Map<String, Double> measure(List<Side> sides, int samples, int ports) {
        Map<String, List<Long>> times = new LinkedHashMap<>();
        for (int i = -1; i < samples; i++) {
            for (Side side : sides) {
                long took = timedRun(side, "sample", SAMPLE_FIRST_PORT, ports);
                awaitPublished(side, "sample", ports);
                side.lab().dockerOk("rm", "-f", "sample");
                if (i >= 0) {
                    times.computeIfAbsent(side.name(), k -> new ArrayList<>()).add(took);
                }
            }
        }
        return MeasuredRuns.medians(times);
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.HOURS) // Docker's side alone takes minutes to start 100 containers of 32 ports
    void dockerRunBesideRunningContainersDockersIptablesAgainstGatun() {
        int running = Integer.getInteger("gatun.measure.running", 100);
        int ports = Integer.getInteger("gatun.measure.ports", 32);
        int samples = Integer.getInteger("gatun.measure.samples", 5);
        List<String> proxies = List.of(System.getProperty("gatun.measure.proxy", "off,on").split(","));
        boolean inBed = Boolean.getBoolean("gatun.measure.bed");
        StringBuilder report = new StringBuilder(String.format(Locale.ROOT,
                "docker run -d with %d published ports, median of %d per side, ms; setup: %d containers of %d ports;"
                        + " dockerd %s%n", ports, samples, running, ports, inBed ? "26 (Debian 13 test bed)" : "20.10"));
        report.append(String.format(Locale.ROOT, "  %-12s %-9s %12s %12s %8s %14s %16s%n", "proxy", "running", "docker",
                "gatun", "ratio", "dockerd alone", "docker / alone"));
        StringBuilder setups = new StringBuilder();
        for (String proxy : proxies) {
            boolean on = proxy.strip().equals("on");
            try (Side docker = new Side("docker", DockerLab.start(on ? DockerLab.Networking.DOCKER_BRIDGE
                    : DockerLab.Networking.DOCKER_BRIDGE_NO_PROXY, inBed), null);
                 Side gatun = gatunSide(on, inBed);
                 Side alone = new Side("alone", DockerLab.start(on ? DockerLab.Networking.GATUN_FOLLOWS_WITH_PROXY
                         : DockerLab.Networking.GATUN_FOLLOWS, inBed), null)) {
                List<Side> sides = List.of(docker, gatun, alone);
                Map<String, Double> idle = measure(sides, samples, ports);
                row(report, proxy, 0, idle);
                System.out.println("measured: " + report.substring(report.lastIndexOf("\n", report.length() - 2) + 1).strip());
                Map<String, Long> setup = new LinkedHashMap<>();
                for (int c = 0; c < running; c++) {
                    for (Side side : sides) {
                        long took = timedRun(side, "bg" + c, BACKGROUND_FIRST_PORT + c * ports, ports);
                        setup.merge(side.name(), took, Long::sum);
                    }
                }
                for (Side side : sides) {
                    awaitPublished(side, "bg" + (running - 1), ports);
                }
                Map<String, Double> busy = measure(sides, samples, ports);
                row(report, proxy, running, busy);
                // Printed as it comes: a run at full size takes long enough to want its figures early.
                System.out.println("measured: " + report.substring(report.lastIndexOf("\n", report.length() - 2) + 1).strip());
                // Taken down one by one, timed as the setup was: Docker's removal of its rules takes minutes at
                // this size, longer than the lab's own cleanup waits for one command.
                Map<String, Long> teardown = new LinkedHashMap<>();
                for (int c = 0; c < running; c++) {
                    for (Side side : sides) {
                        long t0 = System.nanoTime();
                        side.lab().dockerOk("rm", "-f", "bg" + c);
                        teardown.merge(side.name(), System.nanoTime() - t0, Long::sum);
                    }
                }
                String setupLine = String.format(Locale.ROOT, "  setup, proxy %s: docker %.1f s, gatun %.1f s, dockerd alone"
                                + " %.1f s; docker rm -f of them: docker %.1f s, gatun %.1f s, dockerd alone %.1f s%n", proxy,
                        setup.getOrDefault("docker", 0L) / 1e9, setup.getOrDefault("gatun", 0L) / 1e9,
                        setup.getOrDefault("alone", 0L) / 1e9, teardown.getOrDefault("docker", 0L) / 1e9,
                        teardown.getOrDefault("gatun", 0L) / 1e9, teardown.getOrDefault("alone", 0L) / 1e9);
                setups.append(setupLine);
                System.out.println("measured: " + setupLine.strip());
            }
        }
        System.out.print(report.append(setups));
    }

    private static Side gatunSide(boolean proxy, boolean inBed) {
        DockerLab lab = DockerLab.start(proxy ? DockerLab.Networking.GATUN_FOLLOWS_WITH_PROXY
                : DockerLab.Networking.GATUN_FOLLOWS, inBed);
        try {
            return new Side("gatun", lab, GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket()));
        } catch (RuntimeException | Error e) {
            lab.close();
            throw e;
        }
    }

    private static void row(StringBuilder report, String proxy, int running, Map<String, Double> medians) {
        double d = medians.get("docker");
        double g = medians.get("gatun");
        double a = medians.get("alone");
        report.append(String.format(Locale.ROOT, "  %-12s %-9d %12.1f %12.1f %7.1fx %14.1f %15.1fx%n", proxy, running, d, g,
                d / g, a, d / a));
    }
}
