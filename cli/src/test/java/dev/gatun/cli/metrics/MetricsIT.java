package dev.gatun.cli.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Prometheus (Debian's), started by the test in the test's namespace, scrapes the
 * serve's /metrics every second; its query API must count the test's 10 publishes, and
 * promtool must find nothing to say about the exposition.
 */
@ExtendWith(FreshNamespaces.class)
class MetricsIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String METRICS = "127.0.0.1:19464";
    private static final String PROMETHEUS = "127.0.0.1:19090";

    @TempDir
    Path tmp;

    @Test
    void prometheusScrapesTheServeAndCountsTenPublishes(NetworkNamespace host) throws Exception {
        String ns = host.name();
        Oracle.in(host, "ip", "link", "set", "lo", "up");
        Path config = tmp.resolve("prometheus.yml");
        Files.writeString(config, """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: gatun
                    static_configs:
                      - targets: ['%s']
                """.formatted(METRICS));
        try (GatunServe serve = GatunServe.startWith(List.of("ip", "netns", "exec", ns),
                List.of("serve", "--metrics", METRICS), null)) {
            assertThat(serve.readyLine()).contains("metrics on http://" + METRICS + "/metrics");
            Process prometheus = new ProcessBuilder("ip", "netns", "exec", ns, "prometheus",
                    "--config.file=" + config, "--storage.tsdb.path=" + tmp.resolve("tsdb"),
                    "--web.listen-address=" + PROMETHEUS).redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("prometheus.log").toFile()).start();
            try {
                // The control: scraped, and no publish counted yet.
                JsonNode up = awaitResult(host, "up{job=\"gatun\"}", r -> r.size() == 1 && r.get(0).path("value").get(1).asText().equals("1"));
                assertThat(up).as("Prometheus scraped the serve: %s", Files.readString(tmp.resolve("prometheus.log"))).isNotNull();
                assertThat(query(host, "gatun_mappings_changed_total")).isEmpty();

                GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/24");
                for (int i = 0; i < 10; i++) {
                    GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", (8000 + i) + ":80", "--owner", "c1");
                }
                JsonNode counted = awaitResult(host, "gatun_port_change_duration_seconds_count{operation=\"publish\",outcome=\"ok\"}",
                        r -> r.size() == 1 && r.get(0).path("value").get(1).asText().equals("10"));
                assertThat(counted).as("Prometheus's count of the publishes").isNotNull();
                assertThat(query(host, "gatun_published_mappings{network=\"n1\"}").get(0).path("value").get(1).asText())
                        .isEqualTo("10");
                assertThat(query(host, "process_resident_memory_bytes")).hasSize(1);
                assertThat(value(host, "gatun_mappings_changed_total{operation=\"publish\"}")).isEqualTo("10");
                assertThat(Double.parseDouble(value(host, "sum(gatun_commit_requests_count{outcome=\"applied\"})")))
                        .as("a commit for each publish at least (the network's first, too)").isGreaterThanOrEqualTo(10);
                assertThat(value(host, "gatun_commit_retries_total")).as("nobody raced them").isEqualTo("0");
                assertThat(value(host, "gatun_foreign_drops_opened")).as("no other firewall here").isEqualTo("0");

                // The local API, by path and status.
                String api = "/run/gatun/netns-" + host.inode() + ".sock";
                for (String path : List.of("/v1/networks", "/v1/networks", "/v1/no-such-path")) {
                    Oracle.run(List.of("curl", "-s", "-o", "/dev/null", "--unix-socket", api, "http://localhost" + path));
                }
                assertThat(awaitResult(host, "gatun_api_requests_total{path=\"/v1/networks\",status=\"200\"}",
                        r -> r.size() == 1 && r.get(0).path("value").get(1).asText().equals("2"))).isNotNull();
                assertThat(awaitResult(host, "gatun_api_requests_total{status=\"404\"}",
                        r -> r.size() == 1 && r.get(0).path("value").get(1).asText().equals("1"))).isNotNull();

                // Another process flushes the ruleset: an outside change, and a repair of it by its cause.
                assertThat(query(host, "gatun_repair_duration_seconds_count")).as("the control: no repair yet").isEmpty();
                Oracle.in(host, "nft", "flush", "ruleset");
                assertThat(awaitResult(host, "sum(gatun_repair_duration_seconds_count)",
                        r -> r.size() == 1 && Double.parseDouble(r.get(0).path("value").get(1).asText()) >= 1))
                        .as("the repair after nft flush ruleset").isNotNull();
                assertThat(query(host, "gatun_repair_duration_seconds_count")).allSatisfy(
                        r -> assertThat(r.path("metric").path("cause").asText()).isNotEmpty());
                assertThat(Double.parseDouble(value(host, "gatun_outside_changes_total"))).isGreaterThanOrEqualTo(1);
                assertThat(value(host, "gatun_published_mappings{network=\"n1\"}")).as("all 10 back").isEqualTo("10");

                Oracle.Result lint = Oracle.run(List.of("bash", "-o", "pipefail", "-c", "ip netns exec " + ns
                        + " curl -sf http://" + METRICS + "/metrics | promtool check metrics"));
                assertThat(lint.exitCode()).as("promtool check metrics: %s", lint).isZero();
            } finally {
                prometheus.destroy();
                if (!prometheus.waitFor(20, TimeUnit.SECONDS)) {
                    prometheus.destroyForcibly();
                    prometheus.waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** The value of an instant query's single sample (the changes before it were scraped together with what was awaited). */
    private static String value(NetworkNamespace host, String promql) throws Exception {
        JsonNode r = awaitResult(host, promql, x -> x.size() == 1);
        assertThat(r).as("one sample of %s", promql).isNotNull();
        return r.get(0).path("value").get(1).asText();
    }

    /** The result vector of an instant query. */
    private static JsonNode query(NetworkNamespace host, String promql) throws Exception {
        Oracle.Result r = Oracle.run(List.of("ip", "netns", "exec", host.name(), "curl", "-sf", "-G",
                "http://" + PROMETHEUS + "/api/v1/query", "--data-urlencode", "query=" + promql));
        if (r.exitCode() != 0) {
            return null; // not up yet
        }
        return JSON.readTree(r.stdout()).path("data").path("result");
    }

    /** Queries until {@code done} holds for the result, for up to a minute; null when it never did. */
    private static JsonNode awaitResult(NetworkNamespace host, String promql, java.util.function.Predicate<JsonNode> done)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            JsonNode r = query(host, promql);
            if (r != null && done.test(r)) {
                return r;
            }
            Thread.sleep(250);
        }
        return null;
    }
}
