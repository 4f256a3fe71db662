package dev.gatun.cli;

import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Handoff;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static dev.gatun.cli.cni.PodmanCniIT.HOST_IP;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A host port handed between two containers 20 times through the CLI (each a JVM of its own) and
 * through the local API, while a client in an outside namespace opens new connections all the
 * time ({@link Handoff}): none refused, each answered by the owner of its time, a connection
 * opened before the first handoff kept by its container; and UDP's next datagram after a replace
 * answered by the new container, or by the old one while its flows are kept.
 */
@ExtendWith(FreshNamespaces.class)
class PortHandoffIT {

    private static final String A = "10.88.0.2";
    private static final String B = "10.88.0.3";

    /** Hands {@code port} to container {@code ip} as owner {@code owner}, through one entry point. */
    private interface Replacer {
        void replace(String ip, String owner, String port, boolean keepUdpFlows);
    }

    @Test
    void throughTheCli(NetworkNamespace host, NetworkNamespace out, NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        String ns = host.name();
        handOffTwentyTimesAndUdp(host, out, ca, cb, (ip, owner, port, keep) -> {
            List<String> args = new ArrayList<>(List.of("--netns", ns, "publish", "n1", ip, "-p", port,
                    "--owner", owner, "--replace"));
            if (keep) {
                args.add("--keep-udp-flows");
            }
            GatunCli.Run r = GatunCli.ok(args.toArray(String[]::new));
            assertThat(r.out()).contains("replaced ").contains("published ");
        });
    }

    @Test
    void throughTheLocalApi(NetworkNamespace host, NetworkNamespace out, NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (GatunServe serve = GatunServe.start(host.name())) {
            Path socket = Path.of("/run/gatun/netns-" + host.inode() + ".sock");
            handOffTwentyTimesAndUdp(host, out, ca, cb, (ip, owner, port, keep) -> {
                String body = "{\"containerIp\": \"" + ip + "\", \"ports\": [\"" + port + "\"], \"owner\": \"" + owner
                        + "\", \"replace\": true" + (keep ? ", \"keepUdpFlows\": true" : "") + "}";
                Oracle.Result r = Oracle.run(List.of("curl", "-sS", "--unix-socket", socket.toString(), "-X", "POST",
                        "-H", "Content-Type: application/json", "--data-binary", body, "-w", "\n%{http_code}",
                        "http://localhost/v1/networks/n1/ports"));
                assertThat(r.stdout().strip()).as(r.stderr()).endsWith("200").contains("\"replaced\"");
            });
        }
    }

    /**
     * Drains wait on conntrack, not on the serve's threads: 70 at once (the API has 64 threads),
     * half through the command line the C client forwards and half through the REST API, each
     * waiting for a connection kept open through a port of its own. Meanwhile a publish and a
     * listing through the API answer; once the connections close, every drain returns with none
     * remaining.
     */
    @Test
    void drainsThatWaitLeaveTheServeFreeToAnswer(NetworkNamespace host, NetworkNamespace out, NetworkNamespace ca)
            throws Exception {
        PodmanCniIT.outside(host, out);
        String ns = host.name();
        int count = 70;
        try (GatunServe serve = GatunServe.start(ns); Handoff.LineServers tcp = new Handoff.LineServers()) {
            Path socket = Path.of("/run/gatun/netns-" + host.inode() + ".sock");
            GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
            GatunCli.ok("--netns", ns, "attach", "n1", ca.name(), "--ip", A);
            tcp.start(ca, InetAddress.ofLiteral(A), 80, "a");
            List<String> publish = new ArrayList<>(List.of("--netns", ns, "publish", "n1", A, "--owner", "a"));
            for (int i = 0; i < count; i++) {
                publish.addAll(List.of("-p", (9000 + i) + ":80"));
            }
            GatunCli.ok(publish.toArray(String[]::new));
            List<Handoff.Kept> kept = new ArrayList<>();
            List<Process> drains = new ArrayList<>();
            try {
                for (int i = 0; i < count; i++) {
                    kept.add(Handoff.Kept.open(out, HOST_IP, 9000 + i));
                    assertThat(kept.getLast().ask()).isEqualTo("a");
                }
                for (int i = 0; i < count; i++) {
                    String port = (9000 + i) + ":80";
                    List<String> cmd = i % 2 == 0
                            ? List.of(GatunCli.ROOT.resolve("gatun").toString(), "--netns", ns, "unpublish", "n1", A,
                                    "-p", port, "--owner", "a", "--drain", "--timeout", "120")
                            : List.of("curl", "-sS", "--unix-socket", socket.toString(), "-X", "DELETE",
                                    "-H", "Content-Type: application/json", "--data-binary", "{\"containerIp\": \"" + A
                                            + "\", \"ports\": [\"" + port + "\"], \"owner\": \"a\", \"drain\": true, "
                                            + "\"timeoutSeconds\": 120}", "http://localhost/v1/networks/n1/ports");
                    drains.add(new ProcessBuilder(cmd).redirectErrorStream(true).start());
                }
                // Every drain has unpublished its port (the kernel's map says so): all 70 wait now.
                boolean unpublished = Bounded.eventually(Duration.ofSeconds(60),
                        () -> !Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").contains(": 10.88.0.2"));
                assertThat(unpublished).as("every drain unpublished its port").isTrue();

                Oracle.Result published = Oracle.run(List.of("curl", "-sS", "--max-time", "20", "--unix-socket",
                        socket.toString(), "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
                        "{\"containerIp\": \"" + A + "\", \"ports\": [\"8080:80\"], \"owner\": \"b\"}", "-w",
                        "\n%{http_code}", "http://localhost/v1/networks/n1/ports"));
                assertThat(published.stdout().strip()).as("a publish while 70 drains wait: %s", published.stderr())
                        .endsWith("200");
                Oracle.Result listed = Oracle.run(List.of("curl", "-sS", "--max-time", "20", "--unix-socket",
                        socket.toString(), "http://localhost/v1/ports"));
                assertThat(listed.stdout()).as(listed.stderr()).contains("8080").doesNotContain("9000");
                assertThat(drains).as("drains still waiting for their connections").allMatch(Process::isAlive);

                closeAll(kept);
                for (Process d : drains) {
                    assertThat(Bounded.waitFor(d, Duration.ofSeconds(30), "a drain")).isZero();
                    String said = new String(d.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    assertThat(said.replace(" ", "")).containsAnyOf("noestablishedconnectionthroughthemremains",
                            "\"remaining\":0");
                }
            } finally {
                closeAll(kept);
                drains.forEach(Process::destroyForcibly);
            }
        }
    }

    private static void closeAll(List<Handoff.Kept> kept) throws IOException {
        for (Handoff.Kept k : kept) {
            k.close();
        }
    }

    private static void handOffTwentyTimesAndUdp(NetworkNamespace host, NetworkNamespace out, NetworkNamespace ca,
                                                 NetworkNamespace cb, Replacer replacer) throws Exception {
        PodmanCniIT.outside(host, out);
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        GatunCli.ok("--netns", ns, "attach", "n1", ca.name(), "--ip", A);
        GatunCli.ok("--netns", ns, "attach", "n1", cb.name(), "--ip", B);
        try (Handoff.LineServers tcp = new Handoff.LineServers(); ReplyServers udp = new ReplyServers()) {
            tcp.start(ca, InetAddress.ofLiteral(A), 80, "a").start(cb, InetAddress.ofLiteral(B), 80, "b");
            udp.udp(ca, A, 53, "a").udp(cb, B, 53, "b");
            GatunCli.ok("--netns", ns, "publish", "n1", A, "-p", "8080:80", "-p", "5353:53/udp", "--owner", "a");

            Handoff.Outcome seen = Handoff.run(out, HOST_IP, 8080, 20, 300,
                    i -> replacer.replace(i % 2 == 1 ? B : A, i % 2 == 1 ? "b" : "a", "8080:80", false));
            assertThat(seen.wrong()).as("connections refused, reset or answered by the wrong container").isEmpty();
            assertThat(seen.answered()).as("connections made meanwhile").isGreaterThan(300);
            assertThat(seen.keptAnswers()).hasSize(21).containsOnly("a");

            try (DatagramChannel client = ReplyServers.udpClient(out)) {
                assertThat(ReplyServers.udpAsk(client, HOST_IP, 5353)).isEqualTo("a");
                replacer.replace(B, "b", "5353:53/udp", true);
                assertThat(ReplyServers.udpAsk(client, HOST_IP, 5353)).as("flows kept").isEqualTo("a");
                replacer.replace(A, "a", "5353:53/udp", false);
                replacer.replace(B, "b", "5353:53/udp", false);
                assertThat(ReplyServers.udpAsk(client, HOST_IP, 5353)).as("flows deleted").isEqualTo("b");
            }
        }
    }
}
