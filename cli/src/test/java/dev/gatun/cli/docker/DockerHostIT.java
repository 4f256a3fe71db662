package dev.gatun.cli.docker;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Docker host that never opted in: dockerd with {@code --iptables=false --ip6tables=false}
 * (and no docker-proxy, so that nothing but gatun can forward a port), unchanged
 * {@code docker run -p} commands, and {@code gatun serve --docker} following dockerd. The judges:
 * traffic from another namespace, {@code docker port}, and gatun's listing of the kernel.
 */
class DockerHostIT {

    private static final String HOST = Lab.HOST_ADDRESS;
    private static final Duration SETTLE = Duration.ofSeconds(10);

    private static String httpd(String text) {
        return "mkdir -p /www && echo " + text + " > /www/index.html && httpd -p 80 -h /www && (udpreply 53 " + text
                + "-udp &) && exec sleep 3600";
    }

    private static List<String> run(String name, String... ports) {
        List<String> args = new ArrayList<>(List.of("run", "-d", "--init", "--name", name));
        for (String p : ports) {
            args.addAll(List.of("-p", p));
        }
        args.addAll(List.of(DockerLab.IMAGE, "sh", "-c", httpd(name)));
        return args;
    }

    private static String id(DockerLab lab, String container) {
        return lab.dockerOk("inspect", "-f", "{{.Id}}", container).out().strip();
    }

    private static List<JsonNode> mappingsOf(DockerLab lab, String container) {
        return GatunCli.mappingsOf(lab.namespace(), "docker:" + id(lab, container));
    }

    private static void refused(NetworkNamespace outside, int port) {
        assertThatThrownBy(() -> Probe.httpGet(outside, HOST, port, "/index.html")).as("port %d from outside", port)
                .isInstanceOf(IOException.class);
    }

    private interface LabTest {
        void run(DockerLab lab, NetworkNamespace outside) throws Exception;
    }

    private static void inLab(LabTest test) throws Exception {
        String outsideName = FreshNamespaces.PREFIX + "out-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        DockerLab lab = DockerLab.start(DockerLab.Networking.GATUN_FOLLOWS);
        try {
            NetworkNamespace outside = NamedNamespaces.create(outsideName);
            Lab.connectOutside(NetworkNamespace.named(lab.namespace()), outside);
            test.run(lab, outside);
        } finally {
            try {
                lab.close();
            } finally {
                if (NamedNamespaces.exists(outsideName)) {
                    NamedNamespaces.delete(outsideName);
                }
            }
        }
    }

    @Test
    void everyPortOfDockerRunAnswersThroughGatunAndGoesWithItsContainer() throws Exception {
        inLab((lab, outside) -> {
            // The control: dockerd alone forwards nothing.
            lab.dockerOk(run("early", "18079:80").toArray(String[]::new));
            Probe.sleep(500);
            refused(outside, 18079);

            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                // Found at the first reconcile: a container that ran before the serve.
                Probe.awaitHttp(outside, HOST, 18079, "/index.html", "early");

                lab.dockerOk(run("web", "18080:80", "127.0.0.1:18081:80", "80", "5353:53/udp").toArray(String[]::new));
                Probe.awaitHttp(outside, HOST, 18080, "/index.html", "web");
                Probe.awaitUdp(outside, HOST, 5353, "web-udp");
                // From the host itself, on 127.0.0.1 (route_localnet on docker0, the source masqueraded) ...
                NetworkNamespace host = NetworkNamespace.named(lab.namespace());
                Probe.awaitHttp(host, "127.0.0.1", 18081, "/index.html", "web");
                // ... and from a container to its own published port on the host's address (hairpin; timeout, not
                // wget -T, which segfaults in this busybox).
                assertThat(lab.dockerOk("exec", "web", "timeout", "10", "wget", "-qO-", "http://" + HOST + ":18080/index.html")
                        .out().strip()).isEqualTo("web");
                String random = lab.dockerOk("port", "web", "80/tcp").out().lines()
                        .filter(l -> l.startsWith("0.0.0.0:")).findFirst().orElseThrow();
                int randomPort = Integer.parseInt(random.substring("0.0.0.0:".length()).strip());
                Probe.awaitHttp(outside, HOST, randomPort, "/index.html", "web");
                refused(outside, 18081); // bound to 127.0.0.1: not from outside

                String ip = lab.containerIp("web");
                List<JsonNode> held = mappingsOf(lab, "web");
                assertThat(held).extracting(m -> m.get("hostPort").asInt() + " " + m.path("hostIp").asText("*") + " "
                                + m.get("containerIp").asText() + ":" + m.get("containerPort").asInt())
                        .containsExactlyInAnyOrder("18080 * " + ip + ":80", "18081 127.0.0.1 " + ip + ":80",
                                randomPort + " * " + ip + ":80", "5353 * " + ip + ":53");
                assertThat(held).allSatisfy(m -> assertThat(m.get("network").isNull()).as("outside gatun's networks").isTrue());

                String webId = id(lab, "web");
                lab.dockerOk("rm", "-f", "web");
                assertThat(Probe.poll(SETTLE, () -> GatunCli.mappingsOf(lab.namespace(), "docker:" + webId).isEmpty()))
                        .as("web's mappings gone after docker rm -f").isTrue();
                refused(outside, 18080);
                Probe.awaitHttp(outside, HOST, 18079, "/index.html", "early");
                assertThat(serve.stderr()).contains("following dockerd on " + lab.socket());
            }
        });
    }

    @Test
    void aServeStartedAgainMatchesDockerdsViewOfWhatChangedWhileItWasDown() throws Exception {
        inLab((lab, outside) -> {
            GatunServe first = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host", "unix://" + lab.socket());
            String goneId;
            try {
                lab.dockerOk(run("gone", "18090:80").toArray(String[]::new));
                lab.dockerOk(run("stays", "18091:80").toArray(String[]::new));
                Probe.awaitHttp(outside, HOST, 18090, "/index.html", "gone");
                Probe.awaitHttp(outside, HOST, 18091, "/index.html", "stays");
                goneId = id(lab, "gone");
                first.kill(); // -9: no event is seen while it is down
            } finally {
                first.close();
            }
            lab.dockerOk("rm", "-f", "gone");
            lab.dockerOk(run("new", "18092:80").toArray(String[]::new));
            assertThat(GatunCli.mappingsOf(lab.namespace(), "docker:" + goneId)).as("still in the kernel, nobody took it out")
                    .isNotEmpty();

            try (GatunServe again = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                Probe.awaitHttp(outside, HOST, 18092, "/index.html", "new");
                assertThat(Probe.poll(SETTLE, () -> GatunCli.mappingsOf(lab.namespace(), "docker:" + goneId).isEmpty()))
                        .as("the mappings of a container removed while the serve was down").isTrue();
                Probe.awaitHttp(outside, HOST, 18091, "/index.html", "stays");
                refused(outside, 18090);
                assertThat(mappingsOf(lab, "stays")).hasSize(1);
                assertThat(mappingsOf(lab, "new")).hasSize(1);
            }
        });
    }

    /** A server in {@code ns} on {@code address:port} that answers each connection with the address it came from. */
    private static ServerSocketChannel whoAsks(NetworkNamespace ns, String address, int port) throws Exception {
        ServerSocketChannel server = ns.call(() -> ServerSocketChannel.open().bind(new InetSocketAddress(address, port)));
        Thread.ofPlatform().daemon().start(() -> {
            while (server.isOpen()) {
                try (SocketChannel c = server.accept()) {
                    String from = ((InetSocketAddress) c.getRemoteAddress()).getAddress().getHostAddress();
                    c.write(ByteBuffer.wrap(("HTTP/1.0 200 OK\r\n\r\n" + from + "\n").getBytes(StandardCharsets.US_ASCII)));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return server;
    }

    private static DockerLab.Result fetch(DockerLab lab, String container, String url) {
        return lab.docker("exec", container, "timeout", "5", "wget", "-qO-", url);
    }

    @Test
    void dockersNetworksAreAdoptedMasqueradedIsolatedAndInternalAsDockerWouldHaveThem() throws Exception {
        inLab((lab, outside) -> {
            // Routes back to the containers: what reaches them from outside is what gatun lets through, not what routing allows.
            Oracle.in(outside, "ip", "route", "add", DockerLab.DOCKER0_SUBNET, "via", HOST);
            lab.dockerOk("network", "create", "--subnet", "172.31.251.0/24", "appnet");
            lab.dockerOk("network", "create", "--internal", "--subnet", "172.31.252.0/24", "closed");
            lab.dockerOk("network", "create", "-o", "com.docker.network.bridge.enable_icc=false", "--subnet",
                    "172.31.253.0/24", "apart");
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket());
                 ServerSocketChannel who = whoAsks(outside, "192.0.2.2", 18500)) {
                lab.dockerOk(run("web", "18080:80").toArray(String[]::new));
                List<String> onApp = run("app", "18095:80");
                onApp.addAll(2, List.of("--network", "appnet"));
                lab.dockerOk(onApp.toArray(String[]::new));
                List<String> onClosed = run("shut", "18096:80");
                onClosed.addAll(2, List.of("--network", "closed"));
                lab.dockerOk(onClosed.toArray(String[]::new));

                // Out: masqueraded behind the host's address, from the default bridge and from a user-defined network.
                assertThat(fetch(lab, "web", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
                assertThat(fetch(lab, "app", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
                // In: the published ports of both, not a direct route to a container.
                Probe.awaitHttp(outside, HOST, 18080, "/index.html", "web");
                Probe.awaitHttp(outside, HOST, 18095, "/index.html", "app");
                assertThatThrownBy(() -> Probe.httpGet(outside, lab.containerIp("web"), 80, "/index.html"))
                        .as("a direct route to a container").isInstanceOf(IOException.class);
                // icc: two containers of a network reach each other, unless the network says no.
                for (String[] c : List.of(new String[] {"app2", "appnet"}, new String[] {"lone1", "apart"},
                        new String[] {"lone2", "apart"})) {
                    List<String> on = run(c[0]);
                    on.addAll(2, List.of("--network", c[1]));
                    lab.dockerOk(on.toArray(String[]::new));
                }
                assertThat(fetch(lab, "app", "http://" + lab.containerIp("app2") + "/index.html").out().strip())
                        .as("icc on").isEqualTo("app2");
                assertThat(fetch(lab, "lone1", "http://" + lab.containerIp("lone2") + "/index.html").code())
                        .as("icc off").isNotZero();
                // Internal: neither out nor in, its port published or not.
                assertThat(fetch(lab, "shut", "http://192.0.2.2:18500/").code()).as("out of an internal network").isNotZero();
                refused(outside, 18096);
                assertThat(serve.stderr()).contains("adopted bridge docker0", "adopted bridge br-", ", internal)");

                // docker network rm: the bridge let go of, its entries gone.
                lab.dockerOk("rm", "-f", "app", "app2");
                lab.dockerOk("network", "rm", "appnet");
                NetworkNamespace ns = NetworkNamespace.named(lab.namespace());
                assertThat(Probe.poll(SETTLE, () -> !Oracle.tryIn(ns, "nft", "list", "set", "inet", "gatun", "subnets4")
                        .stdout().contains("172.31.251.0/24"))).as("appnet's subnet gone from gatun's sets").isTrue();
                assertThat(fetch(lab, "web", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
            }
        });
    }
}
