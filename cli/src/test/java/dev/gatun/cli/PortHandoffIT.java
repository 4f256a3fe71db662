package dev.gatun.cli;

import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.docker.GatunCli;
import dev.gatun.cli.docker.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Handoff;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.nio.channels.DatagramChannel;
import java.nio.file.Path;
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
