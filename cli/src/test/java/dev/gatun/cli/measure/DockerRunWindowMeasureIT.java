package dev.gatun.cli.measure;

import dev.gatun.cli.testing.Probe;
import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.cli.testing.NftMonitor;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A measurement, not a test of speed: how long after {@code docker run -d -p PORT:80} returns a
 * container's port mapping is in the kernel, with Docker's own iptables mode (its DNAT rule) and
 * with {@code gatun serve --docker} following a dockerd whose iptables are off (gatun's element),
 * both with docker-proxy (dockerd's default), in two labs side by side, samples taken in turns.
 * The moment is the one {@code nft monitor} in the lab's namespace reports the change naming the
 * port; negative means before {@code docker run} returned. Prints p50, p99, min and max per side;
 * asserts only that every run succeeded and every mapping arrived.
 *
 * <pre>
 * mvn -o verify -pl cli -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=DockerRunWindowMeasureIT -Dgatun.measure=true [-Dgatun.measure.samples=200]
 * </pre>
 */
@EnabledIfSystemProperty(named = "gatun.measure", matches = "true")
class DockerRunWindowMeasureIT {

    private static final Duration ARRIVAL_TIMEOUT = Duration.ofSeconds(10);
    private static final int FIRST_PORT = 20000;

    /** One side: its lab, the monitor of its namespace, and the windows measured, in ns. */
    private record Side(String name, DockerLab lab, NftMonitor monitor, List<Long> windows) {}

    @Test
    void fromDockerRunReturningToTheMappingInTheKernel() throws Exception {
        int samples = Integer.getInteger("gatun.measure.samples", 200);
        try (DockerLab docker = DockerLab.start(DockerLab.Networking.DOCKER_BRIDGE);
             DockerLab followed = DockerLab.start(DockerLab.Networking.GATUN_FOLLOWS_WITH_PROXY);
             GatunServe serve = GatunServe.start(followed.namespace(), null, "--docker", "--docker-host",
                     "unix://" + followed.socket());
             NftMonitor dockerMonitor = NftMonitor.start(NetworkNamespace.named(docker.namespace()));
             NftMonitor gatunMonitor = NftMonitor.start(NetworkNamespace.named(followed.namespace()))) {
            List<Side> sides = List.of(new Side("Docker's iptables mode (DNAT rule)", docker, dockerMonitor, new ArrayList<>()),
                    new Side("gatun serve --docker (set element)", followed, gatunMonitor, new ArrayList<>()));
            for (int i = -1; i < samples; i++) {
                int port = FIRST_PORT + i + 1;
                for (Side side : sides) {
                    long window = sample(side, port);
                    if (i >= 0) {
                        side.windows().add(window);
                    }
                }
            }
            assertThat(serve.stderr()).doesNotContain("not published");
            StringBuilder report = new StringBuilder("docker run -d -p PORT:80 returning -> the mapping in the kernel, "
                    + samples + " samples per side, ms (negative: before it returned)\n");
            report.append(String.format("  %-40s %8s %8s %8s %8s%n", "", "p50", "p99", "min", "max"));
            for (Side side : sides) {
                List<Long> sorted = side.windows().stream().sorted().toList();
                report.append(String.format("  %-40s %8.1f %8.1f %8.1f %8.1f%n", side.name(), percentile(sorted, 50),
                        percentile(sorted, 99), sorted.getFirst() / 1e6, sorted.getLast() / 1e6));
            }
            System.out.print(report);
        }
    }

    /** One docker run on {@code side}: the window in ns; the container is removed after (unmeasured). */
    private static long sample(Side side, int port) {
        DockerLab.Result r = side.lab().docker("run", "-d", "--name", "win", "-p", port + ":80", DockerLab.IMAGE, "sleep", "3600");
        long returned = System.nanoTime();
        assertThat(r.code()).as(side.name() + ": " + r.err()).isZero();
        Pattern naming = Pattern.compile("^(add|insert) .*\\b" + port + "\\b");
        long deadline = returned + ARRIVAL_TIMEOUT.toNanos();
        Long arrived = null;
        while (arrived == null) {
            arrived = side.monitor().first(naming);
            if (arrived == null) {
                assertThat(System.nanoTime()).as("%s: the mapping of port %d within %s", side.name(), port, ARRIVAL_TIMEOUT)
                        .isLessThan(deadline);
                Probe.sleep(2);
            }
        }
        side.lab().dockerOk("rm", "-f", "win");
        return arrived - returned;
    }

    private static double percentile(List<Long> sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, rank)) / 1e6;
    }
}
