package dev.gatun.cli.docker;

import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.cli.testing.Probe;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gatun --netns NS serve} without Docker: state made by the one-shot CLI is read back from
 * the kernel when serve starts, re-applied within a second after someone flushes the ruleset,
 * and left alone when serve stops.
 */
@ExtendWith(FreshNamespaces.class)
class ServeIT {

    private static final String HOST = Lab.HOST_ADDRESS;

    @Test
    void repairsAFlushedRulesetWithinOneSecondAndLeavesEverythingOnSigterm(NetworkNamespace host, NetworkNamespace c1,
            NetworkNamespace outside) throws Exception {
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        JsonNode ep = GatunCli.ok("--netns", ns, "--json", "attach", "n1", c1.name(), "--owner", "web-1").json();
        String hostIfname = ep.get("hostIfname").asText();
        GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "5353:53/udp", "--owner", "web-1");
        Lab.connectOutside(host, outside);

        try (ReplyServers servers = new ReplyServers().tcp(c1, "0.0.0.0", 80, "hello-c1").udp(c1, "0.0.0.0", 53, "udp-c1");
             GatunServe serve = GatunServe.start(ns)) {
            assertThat(serve.readyLine()).startsWith("ready");
            assertThat(ReplyServers.tcpFetch(outside, HOST, 8080)).isEqualTo("hello-c1");
            Probe.awaitUdp(outside, HOST, 5353, "udp-c1");
            JsonNode before = Probe.ruleset(host);
            JsonNode mappings = GatunCli.mappings(ns);
            assertThat(mappings).hasSize(2);
            assertThat(Probe.elements(host)).as("the published element with its owner")
                    .anyMatch(e -> e.contains("8080") && e.contains("\"comment\":\"web-1\""));

            for (int round = 1; round <= 2; round++) {
                int mark = serve.stderrMark();
                Oracle.in(host, "nft", "flush", "ruleset");
                boolean back = Probe.poll(Duration.ofSeconds(1), () -> Probe.ruleset(host).equals(before));
                assertThat(back).as("round %d: the ruleset is back within 1 s of nft flush ruleset;\nnow: %s\nexpected: %s"
                        + "\nserve's stderr:\n%s", round, Probe.ruleset(host), before, serve.stderr()).isTrue();
                assertThat(Probe.elements(host)).anyMatch(e -> e.contains("8080") && e.contains("\"comment\":\"web-1\""));
                assertThat(serve.awaitStderr(mark, "repaired", Duration.ofSeconds(2)))
                        .as("round %d: serve logs the repair; its stderr:\n%s", round, serve.stderr()).isTrue();
                assertThat(ReplyServers.tcpFetch(outside, HOST, 8080)).isEqualTo("hello-c1");
                Probe.awaitUdp(outside, HOST, 5353, "udp-c1");
                assertThat(GatunCli.mappings(ns)).isEqualTo(mappings);
            }

            List<String> links = Probe.links(host);
            int code = serve.terminate();
            assertThat(code).as("exit code on SIGTERM; stderr:\n%s", serve.stderr()).isZero();
            assertThat(serve.stdoutLines()).as("stdout: one ready line").hasSize(1);
            assertThat(Probe.ruleset(host)).as("the ruleset after serve stopped").isEqualTo(before);
            assertThat(Probe.links(host)).as("links after serve stopped").isEqualTo(links).contains("gatun-n1", hostIfname);
            assertThat(GatunCli.mappings(ns)).isEqualTo(mappings);
            assertThat(ReplyServers.tcpFetch(outside, HOST, 8080)).isEqualTo("hello-c1");
        }
    }
}
