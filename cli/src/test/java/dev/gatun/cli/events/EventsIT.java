package dev.gatun.cli.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gatun events} of a serve: what it did and saw, in order, from the kernel's side too. */
@ExtendWith(FreshNamespaces.class)
class EventsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aPublishAnUnpublishAnOutsideFlushAndTheRepairThatFollowedInOrder(NetworkNamespace host) throws Exception {
        String ns = host.name();
        try (GatunServe serve = GatunServe.start(ns)) {
            GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/24");
            GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "c1");
            GatunCli.ok("--netns", ns, "unpublish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "c1");
            GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "9090:80", "--owner", "c2");
            int mark = serve.stderrMark();
            // nft in interactive mode stays alive after its commit, so the serve can name who flushed.
            Process nft = new ProcessBuilder("ip", "netns", "exec", ns, "nft", "-i").redirectErrorStream(true).start();
            try {
                nft.getOutputStream().write("flush ruleset\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                nft.getOutputStream().flush();
                assertThat(serve.awaitStderr(mark, "repaired port *:9090/tcp", Duration.ofSeconds(10)))
                        .as("the serve repaired the flush: %s", serve.stderr()).isTrue();
            } finally {
                nft.getOutputStream().close();
                if (!nft.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    nft.destroyForcibly();
                }
            }
            // The kernel agrees with what the repair event says it put back.
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).contains("9090");

            GatunCli.Run r = GatunCli.ok("--netns", ns, "--json", "events", "--since", "10m", "--until", "now");
            List<JsonNode> events = new ArrayList<>();
            for (String line : r.out().strip().split("\n")) {
                events.add(JSON.readTree(line));
            }
            assertThat(events).extracting(e -> e.path("kind").asText())
                    .containsExactly("publish", "unpublish", "publish", "outside-change", "repair");
            assertThat(events).extracting(e -> e.path("seq").asLong()).isSorted().doesNotHaveDuplicates();
            JsonNode publish = events.get(0);
            assertThat(publish.path("mapping").path("hostPort").asInt()).isEqualTo(8080);
            assertThat(publish.path("mapping").path("owner").asText()).isEqualTo("c1");
            assertThat(publish.path("cause").asText()).contains("publish n1 10.88.0.2 -p 8080:80 --owner c1", "gatun client");
            assertThat(events.get(1).path("mapping").path("hostPort").asInt()).isEqualTo(8080);
            assertThat(events.get(1).path("cause").asText()).contains("unpublish");
            assertThat(events.get(3).path("what").asText()).contains("deleted", "the table inet gatun");
            assertThat(events.get(3).path("cause").asText()).as("who made it").contains("nft").doesNotContain("gatun serve");
            JsonNode repair = events.get(4);
            assertThat(repair.path("cause").asText()).isEqualTo("gatun's table changed by another process");
            assertThat(repair.path("repaired").toString()).contains("port *:9090/tcp -> 10.88.0.3:80 of owner c2");
            assertThat(repair.path("seconds").asDouble()).isPositive();

            // People's lines: the same events, one a line.
            GatunCli.Run text = GatunCli.ok("--netns", ns, "events", "--since", "10m", "--until", "now");
            assertThat(text.out().strip().split("\n")).hasSize(5);
            assertThat(text.out()).contains("publish tcp *:8080 -> 10.88.0.2:80 on n1, owner c1", "put back ");
        }
    }

    @Test
    void aStreamingReaderGetsEachEventAsItHappensAndEndsWhenTheServeStops(NetworkNamespace host) throws Exception {
        String ns = host.name();
        try (GatunServe serve = GatunServe.start(ns, null, "--log-requests")) {
            GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/24");
            int mark = serve.stderrMark();
            Process reader = new ProcessBuilder(GatunCli.ROOT.resolve("gatun").toString(), "--netns", ns, "--json", "events")
                    .directory(GatunCli.ROOT.toFile()).start();
            try {
                LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
                Thread.ofVirtual().start(() -> {
                    try (BufferedReader in = new BufferedReader(new InputStreamReader(reader.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = in.readLine()) != null) {
                            lines.add(line);
                        }
                        lines.add("<end>");
                    } catch (Exception e) {
                        lines.add("<error " + e + ">");
                    }
                });
                assertThat(serve.awaitStderr(mark, "GET /v1/events: 200", Duration.ofSeconds(60)))
                        .as("the reader's stream is open: %s", serve.stderr()).isTrue();
                GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "7070:80", "--owner", "s1");
                String first = lines.poll(30, TimeUnit.SECONDS);
                assertThat(first).as("a line after the publish").isNotNull();
                assertThat(JSON.readTree(first).path("mapping").path("hostPort").asInt()).isEqualTo(7070);
                // Nothing from before the stream opened (the net create changed no port, so nothing to see there).
                assertThat(JSON.readTree(first).path("seq").asLong()).isEqualTo(1);
                assertThat(serve.terminate()).isZero();
                assertThat(lines.poll(30, TimeUnit.SECONDS)).isEqualTo("<end>");
                assertThat(reader.waitFor(30, TimeUnit.SECONDS)).isTrue();
                assertThat(reader.exitValue()).isZero();
            } finally {
                reader.destroyForcibly();
            }
        }
    }

    @Test
    void aBadTimeIsAUsageErrorAndNoServeIsAnEnvironmentError(NetworkNamespace host) {
        GatunCli.Run bad = GatunCli.run("--netns", host.name(), "events", "--since", "yesterday");
        assertThat(bad.code()).isEqualTo(2);
        assertThat(bad.err()).contains("--since yesterday is not a time");
        GatunCli.Run none = GatunCli.run("--netns", host.name(), "events", "--until", "now");
        assertThat(none.code()).isEqualTo(4);
        assertThat(none.err()).contains("no gatun serve runs for", "gatun serve");
    }
}
