package dev.gatun.cli.measure;

import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.PluginLab;
import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: the wall time of {@code docker run -d} of one container
 * with 32 published ports, (a) on Docker's own bridge driver with iptables
 * ({@link DockerLab.Networking#DOCKER_BRIDGE}: docker0, iptables rules, a docker-proxy per port,
 * Docker's defaults) and (b) on a network of gatun's plugin, interleaved, several samples each.
 * Prints the medians and their ratio; asserts only that every run succeeded with all 32 ports
 * published. Both labs live in private namespaces; the host is untouched.
 *
 * <pre>
 * mvn -o verify -pl cli -am -Dit.test=DockerRun32IT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dgatun.measure=true [-Dgatun.measure.samples=9] [-Dgatun.measure.sides=docker,gatun]
 *     [-Dgatun.measure.dockerNetworking=DOCKER_BRIDGE_NO_PROXY]
 * </pre>
 */
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
class DockerRun32IT {

    private static final int PORTS = 32;
    private static final int FIRST_HOST_PORT = 30000;

    private interface Side extends AutoCloseable {
        String name();

        /** Runs the container, returns the wall time in nanoseconds of {@code docker run -d}, checks it, removes it. */
        long sample(int i);

        @Override
        void close();
    }

    private static List<String> runArgs(String name, String network) {
        List<String> cmd = new ArrayList<>(List.of("run", "-d", "--name", name));
        if (network != null) {
            cmd.addAll(List.of("--network", network));
        }
        for (int k = 0; k < PORTS; k++) {
            cmd.addAll(List.of("-p", (FIRST_HOST_PORT + k) + ":" + (80 + k)));
        }
        cmd.addAll(List.of(DockerLab.IMAGE, "sleep", "3600"));
        return cmd;
    }

    private static long timed(DockerLab lab, List<String> args) {
        long t0 = System.nanoTime();
        DockerLab.Result r = lab.docker(args.toArray(String[]::new));
        long t = System.nanoTime() - t0;
        assertThat(r.code()).as("docker %s: %s", String.join(" ", args), r.err()).isZero();
        return t;
    }

    /** Docker's own bridge: `docker port` knows the ports. */
    private static final class DockerSide implements Side {
        private final DockerLab lab;

        DockerSide(DockerLab.Networking networking) {
            lab = DockerLab.start(networking);
        }

        @Override
        public String name() {
            return "docker " + lab.networking().name().toLowerCase().replace('_', '-');
        }

        @Override
        public long sample(int i) {
            String c = "m" + i;
            long t = timed(lab, runArgs(c, null));
            Set<Integer> published = new TreeSet<>();
            for (String line : lab.dockerOk("port", c).out().lines().toList()) { // "80/tcp -> 0.0.0.0:30000"
                int container = Integer.parseInt(line.substring(0, line.indexOf('/')));
                int hostPort = Integer.parseInt(line.substring(line.lastIndexOf(':') + 1));
                assertThat(hostPort).as(line).isEqualTo(FIRST_HOST_PORT + container - 80);
                published.add(container);
            }
            assertThat(published).as("docker port %s", c).hasSize(PORTS);
            lab.dockerOk("rm", "-f", c);
            return t;
        }

        @Override
        public void close() {
            lab.close();
        }
    }

    /** gatun's plugin: `gatun ls` knows the ports (docker port cannot, see DockerPluginIT). */
    private static final class GatunSide implements Side {
        private final PluginLab lab;

        GatunSide() {
            lab = PluginLab.start();
            lab.createNetwork("--subnet", "10.89.0.0/24", "net1");
        }

        @Override
        public String name() {
            return "gatun plugin";
        }

        @Override
        public long sample(int i) {
            String c = "m" + i;
            long t = timed(lab.docker, runArgs(c, "net1"));
            String ep = lab.docker.endpointId(c);
            Set<Integer> published = new TreeSet<>();
            for (JsonNode m : GatunCli.mappingsOf(lab.ns(), ep)) {
                int container = m.get("containerPort").asInt();
                assertThat(m.get("hostPort").asInt()).as("%s", m).isEqualTo(FIRST_HOST_PORT + container - 80);
                published.add(container);
            }
            assertThat(published).as("gatun ls, owner %s", ep).hasSize(PORTS);
            lab.docker.dockerOk("rm", "-f", c);
            return t;
        }

        @Override
        public void close() {
            lab.close();
        }
    }

    @Test
    void dockerRunWith32PublishedPorts() {
        int samples = Integer.getInteger("gatun.measure.samples", 7);
        List<String> wanted = Arrays.asList(System.getProperty("gatun.measure.sides", "docker,gatun").split(","));
        DockerLab.Networking dockerNetworking = DockerLab.Networking.valueOf(
                System.getProperty("gatun.measure.dockerNetworking", DockerLab.Networking.DOCKER_BRIDGE.name()));
        List<Side> sides = new ArrayList<>();
        try {
            if (wanted.contains("docker")) {
                sides.add(new DockerSide(dockerNetworking));
            }
            if (wanted.contains("gatun")) {
                sides.add(new GatunSide());
            }
            assertThat(sides).as("gatun.measure.sides=%s", wanted).isNotEmpty();
            List<List<Long>> times = new ArrayList<>();
            sides.forEach(s -> times.add(new ArrayList<>()));
            for (Side s : sides) {
                s.sample(-1); // warm-up, not counted: first image use, first plugin call
            }
            for (int i = 0; i < samples; i++) {
                for (int j = 0; j < sides.size(); j++) {
                    int k = (i % 2 == 0) ? j : sides.size() - 1 - j; // alternate who goes first
                    times.get(k).add(sides.get(k).sample(i));
                }
            }
            StringBuilder report = new StringBuilder("docker run -d with " + PORTS + " published ports, " + samples + " samples each:\n");
            double[] medians = new double[sides.size()];
            for (int j = 0; j < sides.size(); j++) {
                List<Long> ms = times.get(j).stream().sorted().toList();
                medians[j] = median(ms) / 1e6;
                report.append(String.format("  %-32s median %8.1f ms   min %8.1f ms   max %8.1f ms%n",
                        sides.get(j).name(), medians[j], ms.getFirst() / 1e6, ms.getLast() / 1e6));
            }
            if (sides.size() == 2) {
                report.append(String.format("  ratio %s / %s: %.2f%n", sides.get(0).name(), sides.get(1).name(), medians[0] / medians[1]));
            }
            System.out.print(report);
        } finally {
            List<Throwable> failures = new ArrayList<>();
            for (Side s : sides) {
                try {
                    s.close();
                } catch (RuntimeException | Error e) {
                    failures.add(e);
                }
            }
            if (!failures.isEmpty()) {
                throw new AssertionError("cleanup failed", failures.getFirst());
            }
        }
    }

    private static double median(List<Long> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
    }
}
