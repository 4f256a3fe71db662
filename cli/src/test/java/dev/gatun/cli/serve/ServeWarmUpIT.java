package dev.gatun.cli.serve;

import dev.gatun.cli.measure.PodmanRun5MeasureIT;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A serve's warm-up before its ready line (cli/README.md): it runs the request path (containers
 * through the netavark plugin, then publishes) on namespaces of its own and leaves nothing of
 * them: no namespace, no socket, no event and no element in the namespace it serves; without it
 * (--no-warm-up) it says nothing of one. What it buys is measured in bench ("A serve just
 * started") and by PodmanRun5MeasureIT, not here.
 */
@ExtendWith(FreshNamespaces.class)
class ServeWarmUpIT {

    private static final Pattern WARMED = Pattern.compile("warmed up: (\\d+) publish and unpublish pairs and (\\d+) containers");

    @Test
    void theWarmUpRunsBeforeReadyAndLeavesNothing(NetworkNamespace host) throws IOException, InterruptedException {
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.71.0.0/24");
        String rulesetBefore = Oracle.in(host, "nft", "list", "ruleset");
        Set<Path> socketsBefore = sockets();
        try (GatunServe serve = GatunServe.startWarmingUp(host.name())) {
            // Logged before the ready line; the fixture reads stderr on a thread of its own.
            assertThat(serve.awaitStderr(0, "warmed up:", Duration.ofSeconds(5))).as("the warm-up's line, in: %s", serve.stderr()).isTrue();
            Matcher m = WARMED.matcher(serve.stderr());
            assertThat(m.find()).as("the warm-up's line before ready, in: %s", serve.stderr()).isTrue();
            assertThat(Integer.parseInt(m.group(1))).as("pairs sent").isGreaterThanOrEqualTo(300);
            assertThat(Integer.parseInt(m.group(2))).as("containers set up through the netavark plugin")
                    .isGreaterThanOrEqualTo(NetavarkWarmUp.ROUNDS);
            assertThat(serve.stderr()).doesNotContain("warm-up failed");

            assertThat(NamedNamespaces.list()).as("namespaces once ready").noneMatch(n -> n.startsWith("gatun-warm-up-"));
            assertThat(sockets()).as("sockets in /run/gatun once ready: the serve's own two are the new ones")
                    .containsExactlyInAnyOrderElementsOf(union(socketsBefore, ServeSockets.of(host), ServeSockets.oneShotOf(host)));
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).as("the served namespace's ruleset").isEqualTo(rulesetBefore);
            GatunCli.Run events = GatunCli.ok("--netns", host.name(), "events", "--since", "1970-01-01T00:00:00Z", "--until", "now");
            assertThat(events.out()).as("the serve's events: none of the warm-up's").isEmpty();

            // Then it serves as any serve: a publish is its own event and its namespace's element.
            GatunCli.ok("--netns", host.name(), "publish", "n1", "10.71.0.2", "-p", "8080:80", "--owner", "after-warm-up");
            assertThat(GatunCli.ok("--netns", host.name(), "events", "--since", "1970-01-01T00:00:00Z", "--until", "now").out())
                    .contains("after-warm-up").doesNotContain("10.213.").doesNotContain("w1");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).contains("8080");

            // Left alone, it gives back once what the start's compilations left (HeapKeeper).
            assertThat(serve.awaitStderr(0, "settled after the start:", Duration.ofSeconds(75)))
                    .as("the start's full collection once the serve is quiet, in: %s", serve.stderr()).isTrue();
        }
        assertThat(NamedNamespaces.list()).noneMatch(n -> n.startsWith("gatun-warm-up-"));
    }

    @Test
    void withNoWarmUpTheServeIsReadyWithoutOne(NetworkNamespace host) throws InterruptedException {
        try (GatunServe serve = GatunServe.start(host.name(), null, "--log-requests")) {
            GatunCli.ok("--netns", host.name(), "ls");
            // The control: its log of that request has been read, so a line before it would have been too.
            assertThat(serve.awaitStderr(0, "ran gatun", Duration.ofSeconds(5))).as(serve.stderr()).isTrue();
            assertThat(serve.stderr()).as("the fixture's serves start with --no-warm-up").doesNotContain("warmed up");
        }
    }

    /** SIGTERM during the warm-up stops the serve as quickly as at any other time, and the warm-up's namespace goes. */
    @Test
    void aStopDuringTheWarmUpEndsItAtOnce(NetworkNamespace host) throws Exception {
        Path output = Files.createTempFile("gatun-serve", ".out");
        Process serve = new ProcessBuilder(GatunCli.ROOT.resolve("gatun").toString(), "--netns", host.name(), "serve")
                .directory(GatunCli.ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(output.toFile()).start();
        try {
            // The launcher execs the JVM, which names its warm-up's namespace after its pid.
            String warmUp = "gatun-warm-up-" + serve.pid();
            Bounded.until(Duration.ofSeconds(120), warmUp + " while the serve starts", () -> NamedNamespaces.exists(warmUp));
            long t0 = System.nanoTime();
            serve.destroy(); // SIGTERM
            // The warm-up alone has seconds left to run here; a stop takes under two (cli/README.md).
            assertThat(serve.waitFor(5, TimeUnit.SECONDS)).as("the serve stopped within 5 s of SIGTERM").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
            assertThat(NamedNamespaces.list()).as("the warm-up's namespaces after the stop")
                    .noneMatch(n -> n.startsWith("gatun-warm-up-") && n.endsWith("-" + serve.pid()));
            String said = Files.readString(output);
            assertThat(said).as("a serve stopped before it was ready says so, and not that it is ready")
                    .contains("stopping").doesNotContain("ready:");
        } finally {
            serve.destroyForcibly();
            serve.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(output);
        }
    }

    /**
     * A serve killed during its warm-up leaves its namespace; the next serve's warm-up removes it,
     * and a training run's left the same way.
     */
    @Test
    void aWarmUpRemovesTheNamespaceOfOneKilledDuringItsOwn(NetworkNamespace host) throws Exception {
        Process serve = new ProcessBuilder(GatunCli.ROOT.resolve("gatun").toString(), "--netns", host.name(), "serve")
                .directory(GatunCli.ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String left = "gatun-warm-up-" + serve.pid();
        String training = "gatun-training-host-" + serve.pid();
        try {
            // The containers' namespaces are made last, right after it.
            String pod = "gatun-warm-up-pod2-" + serve.pid();
            Bounded.until(Duration.ofSeconds(120), pod + " while the serve starts", () -> NamedNamespaces.exists(pod));
            serve.destroyForcibly(); // SIGKILL: no clean-up runs
            assertThat(serve.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(NamedNamespaces.exists(left)).as("the control: %s left by the kill", left).isTrue();
            assertThat(NamedNamespaces.exists(pod)).as("the control: %s left by the kill", pod).isTrue();
            // As a training run killed with SIGKILL leaves its own (its process is gone as well).
            NamedNamespaces.create(training);
            try (GatunServe next = GatunServe.startWarmingUp(host.name())) {
                assertThat(NamedNamespaces.exists(left)).as("%s once the next serve is ready", left).isFalse();
                assertThat(NamedNamespaces.list()).as("its containers' namespaces once the next serve is ready")
                        .noneMatch(n -> n.startsWith("gatun-warm-up-pod") && n.endsWith("-" + serve.pid()));
                assertThat(NamedNamespaces.exists(training)).as("%s once the next serve is ready", training).isFalse();
            }
        } finally {
            serve.destroyForcibly();
            for (String n : List.of(left, training, "gatun-warm-up-pod1-" + serve.pid(), "gatun-warm-up-pod2-" + serve.pid())) {
                if (NamedNamespaces.exists(n)) {
                    NamedNamespaces.delete(n);
                }
            }
        }
    }

    private static Set<Path> sockets() throws IOException {
        if (!Files.isDirectory(ServeSockets.DIR)) {
            return Set.of();
        }
        try (Stream<Path> files = Files.list(ServeSockets.DIR)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".sock")).collect(Collectors.toSet());
        }
    }

    private static List<Path> union(Set<Path> before, Path... added) {
        return Stream.concat(before.stream(), Stream.of(added)).distinct().toList();
    }
}
