package dev.gatun.cli.cni;

import dev.gatun.cli.testing.PodmanLab;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real Podman 4.3 attaching containers through gatun's CNI plugin ({@link PodmanLab}): as the
 * main plugin, and chained in Podman's own conflist in place of {@code portmap}. The published
 * ports answer from an outside namespace (a veth into the host namespace, 192.0.2.1) and hairpin
 * from a sibling; {@code podman rm -f} leaves nothing. Without a serve here: each plugin call is
 * a JVM; {@link PodmanCniServedIT} runs the same through a serve.
 */
@ExtendWith(FreshNamespaces.class)
public class PodmanCniIT {

    public static final String HOST_IP = "192.0.2.1";
    public static final String WEB = "echo hello-from-$HOSTNAME > /tmp/index.html; udpreply 53 udp-from-$HOSTNAME & "
            + "exec httpd -f -p 80 -h /tmp";

    void useHost(NetworkNamespace host) {
    }

    /** The outside: a namespace with a veth into the host namespace, which has 192.0.2.1 on its end. */
    public static void outside(NetworkNamespace host, NetworkNamespace outside) {
        Oracle.in(host, "ip", "link", "add", "out0", "type", "veth", "peer", "name", "out1", "netns", outside.name());
        Oracle.in(host, "ip", "addr", "add", HOST_IP + "/24", "dev", "out0");
        Oracle.in(host, "ip", "link", "set", "out0", "up");
        Oracle.in(outside, "ip", "addr", "add", "192.0.2.2/24", "dev", "out1");
        Oracle.in(outside, "ip", "link", "set", "out1", "up");
        Oracle.in(outside, "ip", "link", "set", "lo", "up");
        Oracle.in(host, "ip", "link", "set", "lo", "up");
    }

    /** What an HTTP GET from {@code ns} reads, retried for a while: a container's httpd starts after run -d returns. */
    public static String http(NetworkNamespace ns, String address, int port) throws InterruptedException {
        Oracle.Result r = null;
        for (int i = 0; i < 50; i++) {
            r = Oracle.tryIn(ns, "curl", "-s", "-m", "3", "http://" + address + ":" + port + "/");
            if (r.exitCode() == 0) {
                return r.stdout().strip();
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no HTTP answer on " + address + ":" + port + " from " + ns + ": curl exited "
                + r.exitCode() + " " + r.stderr());
    }

    public static String udp(NetworkNamespace ns, String address, int port) {
        return ns.call(() -> {
            try (DatagramSocket socket = new DatagramSocket()) {
                socket.setSoTimeout(300);
                byte[] ping = "ping".getBytes(StandardCharsets.UTF_8);
                for (int i = 0; i < 30; i++) {
                    socket.send(new DatagramPacket(ping, ping.length, new InetSocketAddress(address, port)));
                    DatagramPacket answer = new DatagramPacket(new byte[200], 200);
                    try {
                        socket.receive(answer);
                        return new String(answer.getData(), 0, answer.getLength(), StandardCharsets.UTF_8);
                    } catch (SocketTimeoutException notYet) {
                        // the container's responder may not run yet
                    }
                }
                throw new AssertionError("no UDP answer on " + address + ":" + port + " from " + ns);
            }
        });
    }

    public static String elements(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports4").stdout();
    }

    @Test
    void mainPlugin(NetworkNamespace host, NetworkNamespace out) throws Exception {
        outside(host, out);
        useHost(host);
        try (PodmanLab lab = PodmanLab.start(host)) {
            lab.gatunNetwork("gt", "10.88.0.0/24");
            publishedPortsWorkAndRmLeavesNothing(lab, host, out, "gt", "10.88.0.1");
        }
    }

    @Test
    void chainedInPodmansOwnConflist(NetworkNamespace host, NetworkNamespace out) throws Exception {
        outside(host, out);
        useHost(host);
        try (PodmanLab lab = PodmanLab.start(host)) {
            lab.podmanNetwork("pc", "10.89.0.0/24", true);
            List<String> types = new ArrayList<>();
            lab.conflist("pc").path("plugins").forEach(p -> types.add(p.path("type").asText()));
            assertThat(types).containsExactly("bridge", "gatun", "firewall", "tuning");
            publishedPortsWorkAndRmLeavesNothing(lab, host, out, "pc", "10.89.0.1");
        }
    }

    private void publishedPortsWorkAndRmLeavesNothing(PodmanLab lab, NetworkNamespace host, NetworkNamespace out,
                                                       String network, String gateway) throws Exception {
        String linksBefore = Oracle.in(host, "ip", "-o", "link", "show");
        lab.podmanOk("run", "-d", "--name", "web", "--network", network, "--ulimit", "nofile=1024:1024",
                "--ulimit", "nproc=1024:1024", "-p", "8080:80", "-p", "5353:53/udp", PodmanLab.IMAGE, "sh", "-c", WEB);
        assertThat(http(out, HOST_IP, 8080)).startsWith("hello-from-");
        assertThat(udp(out, HOST_IP, 5353)).startsWith("udp-from-");
        assertThat(lab.podmanOk("port", "web").out()).contains("80/tcp -> 0.0.0.0:8080").contains("53/udp -> 0.0.0.0:5353");
        assertThat(elements(host)).contains("tcp . 8080").contains("udp . 5353");

        lab.podmanOk("run", "-d", "--name", "sibling", "--network", network, "--ulimit", "nofile=1024:1024",
                "--ulimit", "nproc=1024:1024", PodmanLab.IMAGE, "sleep", "600");
        // Hairpin: a container of the same bridge, through the host's published port.
        PodmanLab.Result hairpin = null;
        for (int i = 0; i < 30; i++) {
            // busybox-static's wget crashes resolving even a literal address; nc does not resolve.
            hairpin = lab.podman("exec", "sibling", "sh", "-c",
                    "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + HOST_IP + " 8080");
            if (hairpin.code() == 0) {
                break;
            }
            Thread.sleep(100);
        }
        assertThat(hairpin.out()).as(hairpin.err()).startsWith("HTTP/1.1 200").contains("hello-from-");

        lab.podmanOk("rm", "-f", "-t", "0", "web", "sibling");
        assertThat(elements(host)).doesNotContain("8080").doesNotContain("5353");
        List<String> linksAfter = Oracle.in(host, "ip", "-o", "link", "show").lines()
                .filter(l -> l.contains("veth") || l.contains(": gv")).toList();
        assertThat(linksAfter).as("no veth left (before: " + linksBefore + ")").isEmpty();
        assertThat(lab.reservations(network)).isEmpty();
    }

    @Test
    void twentyContainersStartedAtOnceWithFourPortsEachAllAnswer(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        outside(host, out);
        useHost(host);
        try (PodmanLab lab = PodmanLab.start(host)) {
            lab.gatunNetwork("many", "10.90.0.0/24");
            String serve = "echo hello-from-$HOSTNAME > /tmp/index.html; for p in 80 81 82; do httpd -p $p -h /tmp; done; "
                    + "exec httpd -f -p 83 -h /tmp";
            List<CompletableFuture<PodmanLab.Result>> runs = new ArrayList<>();
            try (ExecutorService pool = Executors.newFixedThreadPool(20)) {
                for (int c = 0; c < 20; c++) {
                    List<String> ports = new ArrayList<>();
                    for (int k = 0; k < 4; k++) {
                        ports.add((20000 + c * 4 + k) + ":" + (80 + k));
                    }
                    String name = "m" + c;
                    runs.add(CompletableFuture.supplyAsync(() -> lab.runDetached(name, "many", ports, "sh", "-c", serve), pool));
                }
            }
            for (CompletableFuture<PodmanLab.Result> r : runs) {
                PodmanLab.Result done = Bounded.get(r, "podman run of a container with many ports");
                assertThat(done.code()).as(done.err()).isZero();
            }
            for (int c = 0; c < 20; c++) {
                for (int k = 0; k < 4; k++) {
                    assertThat(http(out, HOST_IP, 20000 + c * 4 + k)).as("container m" + c + " port " + (80 + k))
                            .startsWith("hello-from-");
                }
            }
            lab.podmanOk("rm", "-a", "-f", "-t", "0");
            assertThat(elements(host)).doesNotContain("comment");
            assertThat(lab.reservations("many")).isEmpty();
        }
    }
}
