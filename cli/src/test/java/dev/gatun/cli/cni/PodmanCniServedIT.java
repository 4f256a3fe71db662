package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PodmanCniIT} with a {@code gatun serve} for the host namespace: Podman's plugin calls go
 * through the C client. Every one of them must have run in the serve: its event log must hold
 * every mapping published and unpublished as done by a CNI call it ran, and no change to
 * gatun's table by another process (which is what a call that ran in a JVM of its own is).
 */
class PodmanCniServedIT extends PodmanCniIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, GatunServe> serves = new LinkedHashMap<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.put(host.name(), GatunServe.start(host.name(), null, "--log-requests"));
    }

    @AfterEach
    void everyCallRanInTheServe() throws Exception {
        try {
            assertThat(serves).as("a test here runs a serve").isNotEmpty();
            for (Map.Entry<String, GatunServe> s : serves.entrySet()) {
                List<JsonNode> events = events(s.getKey());
                List<String> kinds = events.stream().map(e -> e.path("kind").asText()).toList();
                assertThat(kinds).as("the serve's events").contains("publish", "unpublish").doesNotContain("outside-change");
                for (JsonNode e : events) {
                    if (List.of("publish", "unpublish").contains(e.path("kind").asText())) {
                        assertThat(e.path("cause").asText()).as("who asked for %s; the serve's log:\n%s", e,
                                s.getValue().stderr()).matches("CNI (ADD|DEL) \\S+");
                    }
                }
            }
        } finally {
            serves.values().forEach(GatunServe::close);
            serves.clear();
        }
    }

    /** Every event the serve of {@code namespace} kept, oldest first. */
    private static List<JsonNode> events(String namespace) throws Exception {
        String out = GatunCli.ok("--netns", namespace, "--json", "events", "--since", "1h", "--until", "now").out();
        List<JsonNode> events = new ArrayList<>();
        for (String line : out.strip().split("\n")) {
            if (!line.isBlank()) {
                events.add(JSON.readTree(line));
            }
        }
        return events;
    }
}
