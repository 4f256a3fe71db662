package dev.gatun.cli.docker;

import dev.gatun.cli.testing.ConntrackEvents;
import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.Outside;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.cli.testing.NftMonitor;
import dev.gatun.cli.testing.Probe;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.CraftedFrames;
import dev.gatun.testing.CraftedFrames.Wire;
import dev.gatun.testing.HostFirewalls;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.SteadyUdpClient;
import dev.gatun.testing.UdpInbox;
import dev.gatun.testing.XtablesLockHolder;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

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
    private static final InetAddress LOCALHOST = InetAddress.ofLiteral("127.0.0.1");
    private static final InetAddress OUTSIDE = InetAddress.ofLiteral("192.0.2.2");
    /** How long a datagram that must arrive is waited for. */
    private static final Duration ARRIVES = Duration.ofSeconds(3);
    /** How long a refused frame is given to arrive after its control, sent before it, has. */
    private static final Duration GRACE = Duration.ofMillis(500);
    /** How often a steady UDP client sends. */
    private static final Duration EVERY = Duration.ofMillis(100);

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

    interface LabTest {
        void run(DockerLab lab, NetworkNamespace outside) throws Exception;
    }

    /** Whether the lab's dockerd is Debian 13's dockerd 26 from the test bed ({@link DockerHost26IT}) rather than 20.10. */
    boolean inBed() {
        return false;
    }

    void inLab(LabTest test) throws Exception {
        inLab(DockerLab.Networking.GATUN_FOLLOWS, test);
    }

    private void inLab(DockerLab.Networking networking, LabTest test) throws Exception {
        try (DockerLab lab = DockerLab.start(networking, inBed());
             Outside outside = Outside.joinedTo(NetworkNamespace.named(lab.namespace()))) {
            test.run(lab, outside.ns());
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
                String webShort = id(lab, "web").substring(0, 12);
                // The ports asked for by number go in at the container's network connect, while dockerd is still
                // starting it; the one dockerd chose (-p 80) once it is started.
                assertThat(Probe.poll(SETTLE, () -> serve.stderr().contains("for container " + webShort + " at its network connect")))
                        .as("published at the network connect: %s", serve.stderr()).isTrue();
                assertThat(serve.stderr()).contains("published *:18080 -> " + lab.containerIp("web") + ":80/tcp for container "
                        + webShort + " at its network connect");
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
                kernelMatchesDockerd(lab, serve);
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
                // The ready line comes after the first reconcile: a second is room for reading, not for catching up.
                assertThat(Probe.poll(Duration.ofSeconds(1), () -> GatunCli.mappingsOf(lab.namespace(), "docker:" + goneId)
                        .isEmpty() && mappingsOf(lab, "new").size() == 1))
                        .as("within a second of ready: the removed container's mappings gone, the new one's in").isTrue();
                Probe.awaitHttp(outside, HOST, 18092, "/index.html", "new");
                Probe.awaitHttp(outside, HOST, 18091, "/index.html", "stays");
                refused(outside, 18090);
                assertThat(mappingsOf(lab, "stays")).hasSize(1);
                assertThat(mappingsOf(lab, "new")).hasSize(1);
                kernelMatchesDockerd(lab, again);
            }
        });
    }

    /** A server in {@code ns} on {@code address:port} that answers each connection with the address it came from. */
    private static ServerSocketChannel whoAsks(NetworkNamespace ns, String address, int port) throws Exception {
        ServerSocketChannel server = ns.call(() -> ServerSocketChannel.open().bind(new InetSocketAddress(address, port)));
        Thread.ofPlatform().daemon().start(() -> {
            while (server.isOpen()) {
                try (SocketChannel c = server.accept()) {
                    // The request read first: closing with it unread would reset the connection under the answer.
                    c.read(ByteBuffer.allocate(4096));
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
            lab.dockerOk("network", "create", "-o", "com.docker.network.bridge.enable_ip_masquerade=false", "--subnet",
                    "172.31.247.0/24", "routed");
            Oracle.in(outside, "ip", "route", "add", "172.31.247.0/24", "via", HOST);
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

                // Out: masqueraded behind the host's address, from the default bridge and from a user-defined network;
                // not from one that asks for no masquerade (its address is routed back).
                assertThat(fetch(lab, "web", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
                assertThat(fetch(lab, "app", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
                List<String> onRouted = run("direct");
                onRouted.addAll(2, List.of("--network", "routed"));
                lab.dockerOk(onRouted.toArray(String[]::new));
                assertThat(fetch(lab, "direct", "http://192.0.2.2:18500/").out().strip()).as("enable_ip_masquerade=false")
                        .isEqualTo(lab.containerIp("direct"));
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
                // Isolation: no way from one Docker network into another, as dockerd's ISOLATION chains would have it.
                assertThat(fetch(lab, "app", "http://" + lab.containerIp("web") + "/index.html").code())
                        .as("from appnet into the default bridge").isNotZero();
                assertThat(fetch(lab, "web", "http://" + lab.containerIp("app") + "/index.html").code())
                        .as("from the default bridge into appnet").isNotZero();
                // Internal: neither out nor in, its port published or not.
                assertThat(fetch(lab, "shut", "http://192.0.2.2:18500/").code()).as("out of an internal network").isNotZero();
                assertThat(fetch(lab, "shut", "http://127.0.0.1/index.html").out().strip()).as("the control: it serves")
                        .isEqualTo("shut");
                refused(outside, 18096);
                assertThat(serve.stderr()).contains("adopted bridge docker0", "adopted bridge br-", ", internal)");

                // docker network rm: the bridge let go of, its entries gone.
                lab.dockerOk("rm", "-f", "app", "app2");
                lab.dockerOk("network", "rm", "appnet");
                NetworkNamespace ns = NetworkNamespace.named(lab.namespace());
                assertThat(Probe.poll(SETTLE, () -> !Oracle.tryIn(ns, "nft", "list", "set", "inet", "gatun", "subnets4")
                        .stdout().contains("172.31.251.0/24"))).as("appnet's subnet gone from gatun's sets").isTrue();
                assertThat(fetch(lab, "web", "http://192.0.2.2:18500/").out().strip()).isEqualTo(HOST);
                kernelMatchesDockerd(lab, serve);
            }
        });
    }
    /**
     * A dual-stack network: dockerd records every binding twice, 0.0.0.0 and [::]; the second goes
     * to the container's IPv6 address, and answers over IPv6 from outside. (No SCTP here: dockerd
     * reserves a port with a socket of its protocol, and this kernel has no SCTP sockets.) The
     * container's start is one nftables transaction for both families, and its removal another,
     * as nft monitor sees them.
     */
    @Test
    void aDualStackNetworksPortsAnswerOverIpv6FromOutside() throws Exception {
        inLab((lab, outside) -> {
            lab.dockerOk("network", "create", "--ipv6", "--subnet", "172.31.248.0/24", "--subnet", "fd00:31:248::/64", "v6net");
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket());
                 NftMonitor monitor = NftMonitor.start(NetworkNamespace.named(lab.namespace()))) {
                List<String> six = run("six", "18900:80", "18901:81");
                six.addAll(2, List.of("--network", "v6net"));
                lab.dockerOk(six.toArray(String[]::new));
                String ip6 = lab.dockerOk("inspect", "-f", "{{(index .NetworkSettings.Networks \"v6net\").GlobalIPv6Address}}",
                        "six").out().strip();
                assertThat(ip6).as("the container's IPv6 address").startsWith("fd00:31:248::");
                Probe.awaitHttp(outside, Lab.HOST_ADDRESS6, 18900, "/index.html", "six");
                Probe.awaitHttp(outside, HOST, 18900, "/index.html", "six");
                assertThat(mappingsOf(lab, "six")).extracting(m -> m.get("hostPort").asInt() + " " + m.get("containerIp").asText())
                        .containsExactlyInAnyOrder("18900 " + lab.containerIp("six"), "18900 " + ip6,
                                "18901 " + lab.containerIp("six"), "18901 " + ip6);
                lab.dockerOk("rm", "-f", "six");
                assertThat(Probe.poll(SETTLE, () -> GatunCli.mappings(lab.namespace()).isEmpty()))
                        .as("nothing left after docker rm -f").isTrue();
                monitor.stop();
                assertThat(monitor.generations()).as("commits of the serve: %s", serve.stderr()).hasSize(2);
            }
        });
    }

    /**
     * One serve for both ways in: {@code --docker} following a dockerd it finds through
     * {@code DOCKER_HOST} (as the docker CLI finds it; no {@code --docker-host}), and
     * {@code --docker-plugin} for the plugin networks of the same dockerd. Each container's ports
     * are published once, by the way its network goes: a plugin network's by the plugin, owned
     * by the endpoint, never also by the follower.
     */
    @Test
    void oneServeFollowsTheDockerdOfDockerHostAndServesItsPluginNetworks() throws Exception {
        inLab((lab, outside) -> {
            String plugin = GatunServe.uniquePluginName();
            try (GatunServe serve = GatunServe.start(Map.of("DOCKER_HOST", "unix://" + lab.socket()),
                    lab.namespace(), plugin, "--docker")) {
                assertThat(serve.stderr()).contains("following dockerd on " + lab.socket());
                lab.dockerOk("network", "create", "-d", plugin, "--subnet", "10.89.7.0/24", "pnet");
                try {
                    lab.dockerOk(run("web", "18800:80").toArray(String[]::new));
                    List<String> onPlugin = run("plug", "18801:80");
                    onPlugin.addAll(2, List.of("--network", "pnet"));
                    lab.dockerOk(onPlugin.toArray(String[]::new));
                    Probe.awaitHttp(outside, HOST, 18800, "/index.html", "web");
                    Probe.awaitHttp(outside, HOST, 18801, "/index.html", "plug");
                    assertThat(mappingsOf(lab, "web")).extracting(m -> m.get("hostPort").asInt()).containsExactly(18800);
                    assertThat(GatunCli.mappingsOf(lab.namespace(), lab.endpointId("plug")))
                            .as("the plugin's mapping, owned by the endpoint").extracting(m -> m.get("hostPort").asInt())
                            .containsExactly(18801);
                    assertThat(mappingsOf(lab, "plug")).as("none of the follower's for a plugin network's container").isEmpty();
                } finally {
                    // Before the serve goes: dockerd asks the plugin to let go of them.
                    lab.docker("rm", "-f", "plug");
                    lab.docker("network", "rm", "pnet");
                }
                assertThat(serve.stderr()).doesNotContain("not published", "trying again");
            }
        });
    }

    /**
     * A compose-style project: two services on the project's own network (a user-defined bridge),
     * with every shape of {@code -p} a compose file gives (a range onto a range, a range to choose
     * one port from, UDP, a random port, one bound to 127.0.0.1). The judge of what is published
     * is dockerd's own {@code docker port}, compared whole with gatun's listing, then traffic to
     * each; again after the service is disconnected from its network and connected back.
     */
    @Test
    void aComposeProjectsPortsOfEveryShapeAnswerAsDockerPortListsThemAcrossADisconnect() throws Exception {
        inLab((lab, outside) -> {
            lab.dockerOk("network", "create", "--subnet", "172.31.249.0/24", "project_default");
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                lab.dockerOk("run", "-d", "--init", "--name", "svc", "--network", "project_default",
                        "-p", "18700-18702:80-82", "-p", "18710-18719:80", "-p", "5356:53/udp", "-p", "80",
                        "-p", "127.0.0.1:18703:80", DockerLab.IMAGE, "sh", "-c",
                        "for p in 80 81 82; do mkdir -p /www$p && echo svc-$p > /www$p/index.html && httpd -p $p -h /www$p;"
                                + " done && (udpreply 53 svc-udp &) && exec sleep 3600");
                List<String> db = run("db", "18704:80");
                db.addAll(2, List.of("--network", "project_default"));
                lab.dockerOk(db.toArray(String[]::new));

                List<String> listed = answersAsDockerPortLists(lab, outside, serve);
                assertThat(listed).as("what docker port lists").hasSize(7);
                Probe.awaitHttp(outside, HOST, 18704, "/index.html", "db");
                // The range onto a range: each host port to its own container port.
                Probe.awaitHttp(outside, HOST, 18701, "/index.html", "svc-81");
                Probe.awaitHttp(outside, HOST, 18702, "/index.html", "svc-82");
                Probe.awaitUdp(outside, HOST, 5356, "svc-udp");
                refused(outside, 18703);
                // Hairpin: one service to the other's published port on the host's address.
                assertThat(fetch(lab, "db", "http://" + HOST + ":18700/index.html").out().strip()).isEqualTo("svc-80");
                // By name, as compose's services reach each other (dockerd's resolver on the project's network).
                DockerLab.Result byName = fetch(lab, "db", "http://svc/index.html");
                assertThat(byName.out().strip()).as("db to svc by name: %s", byName.err()).isEqualTo("svc-80");

                lab.dockerOk("network", "disconnect", "project_default", "svc");
                assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "svc").isEmpty()))
                        .as("svc's mappings gone at its disconnect: %s", serve.stderr()).isTrue();
                refusedSoon(outside, 18700);
                Probe.awaitHttp(outside, HOST, 18704, "/index.html", "db");

                lab.dockerOk("network", "connect", "project_default", "svc");
                List<String> again = answersAsDockerPortLists(lab, outside, serve);
                assertThat(again).as("what docker port lists after the connect").hasSize(listed.size());
                assertThat(serve.stderr()).doesNotContain("not published", "not a number", "trying again");
            }
        });
    }

    /**
     * Waits until gatun holds for svc exactly what {@code docker port svc} lists (its IPv4
     * bindings: the network has no IPv6, and dockerd lists [::] beside 0.0.0.0), then asks each
     * TCP binding for what answers: the container port's own page, from outside or, bound to
     * 127.0.0.1, from the host. What docker port listed, as {@code HOSTIP:HOSTPORT -> PORT/PROTO}.
     */
    private static List<String> answersAsDockerPortLists(DockerLab lab, NetworkNamespace outside, GatunServe serve) {
        List<String> listed = new ArrayList<>();
        assertThat(Probe.poll(SETTLE, () -> {
            listed.clear();
            listed.addAll(dockerPort(lab, "svc"));
            List<String> held = gatunListing(GatunCli.mappings(lab.namespace()), "docker:" + id(lab, "svc"));
            return !listed.isEmpty() && held.size() == listed.size() && held.containsAll(listed);
        })).as("gatun holds what docker port lists: %s; the serve: %s", listed, serve.stderr()).isTrue();
        NetworkNamespace host = NetworkNamespace.named(lab.namespace());
        for (String binding : listed) {
            String[] sides = binding.split(" -> ");
            if (!sides[1].endsWith("/tcp")) {
                continue;
            }
            int colon = sides[0].lastIndexOf(':');
            String hostIp = sides[0].substring(0, colon);
            int hostPort = Integer.parseInt(sides[0].substring(colon + 1));
            String page = "svc-" + sides[1].substring(0, sides[1].indexOf('/'));
            Probe.awaitHttp(hostIp.equals("127.0.0.1") ? host : outside, hostIp.equals("127.0.0.1") ? "127.0.0.1" : HOST,
                    hostPort, "/index.html", page);
        }
        return List.copyOf(listed);
    }

    /** {@code docker port CONTAINER}'s IPv4 bindings as {@code HOSTIP:HOSTPORT -> PORT/PROTO} (dockerd lists [::] beside 0.0.0.0). */
    private static List<String> dockerPort(DockerLab lab, String container) {
        return lab.dockerOk("port", container).out().lines().filter(l -> !l.contains("[::]")).map(l -> {
            String[] sides = l.split(" -> ");
            return sides[1].strip() + " -> " + sides[0].strip();
        }).toList();
    }

    /** The mappings of {@code owner} in a listing of gatun's, as {@link #dockerPort} writes them. */
    private static List<String> gatunListing(JsonNode mappings, String owner) {
        List<String> out = new ArrayList<>();
        for (JsonNode m : mappings) {
            if (owner.equals(m.path("owner").asText(null))) {
                out.add((m.path("hostIp").isNull() || m.path("hostIp").isMissingNode() ? "0.0.0.0" : m.get("hostIp").asText())
                        + ":" + m.get("hostPort").asInt() + " -> " + m.get("containerPort").asInt() + "/"
                        + m.get("protocol").asText());
            }
        }
        return out;
    }

    /**
     * Waits until gatun's table holds exactly dockerd's picture: for every running container
     * what {@code docker port} lists (IPv4), and no mapping of any other owner.
     */
    private static void kernelMatchesDockerd(DockerLab lab, GatunServe serve) {
        StringBuilder last = new StringBuilder();
        assertThat(Probe.poll(SETTLE, () -> {
            last.setLength(0);
            JsonNode mappings = GatunCli.mappings(lab.namespace());
            List<String> running = lab.dockerOk("ps", "-q", "--no-trunc").out().lines().map(String::strip).toList();
            int expected = 0;
            for (String id : running) {
                List<String> listed = dockerPort(lab, id);
                List<String> held = gatunListing(mappings, "docker:" + id);
                expected += listed.size();
                if (held.size() != listed.size() || !held.containsAll(listed)) {
                    last.append(id, 0, 12).append(": docker port ").append(listed).append(", gatun ").append(held).append("; ");
                }
            }
            if (mappings.size() != expected) {
                last.append(mappings.size()).append(" mappings in all, ").append(expected).append(" listed by docker port");
            }
            return last.isEmpty();
        })).as("gatun's table is dockerd's picture: %s; the serve: %s", last, serve.stderr()).isTrue();
    }

    private static String processName() throws IOException {
        return Files.readString(Path.of("/proc/self/comm")).strip();
    }

    /**
     * dockerd holds every port it records (docker-proxy, or a socket of its own without the
     * proxy), so another process holds one only once dockerd's holder is gone: here a
     * docker-proxy killed while the serve was down, and a process that took its port meanwhile.
     */
    @Test
    void aPortAnotherProcessHoldsIsReportedAndLeftToItWhileTheContainersOtherPortsArePublished() throws Exception {
        inLab(DockerLab.Networking.GATUN_FOLLOWS_WITH_PROXY, (lab, outside) -> {
            NetworkNamespace host = NetworkNamespace.named(lab.namespace());
            lab.dockerOk(run("web", "18300:80", "18301:80").toArray(String[]::new));
            String proxies = Oracle.in(host, "ss", "-Hltnp", "sport", "= :18300");
            List<String> pids = Pattern.compile("\"docker-proxy\",pid=(\\d+)").matcher(proxies).results()
                    .map(r -> r.group(1)).toList();
            assertThat(pids).as("docker-proxy holds 18300: %s", proxies).isNotEmpty();
            for (String pid : pids) {
                ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
            }
            assertThat(Probe.poll(SETTLE, () -> Oracle.in(host, "ss", "-Hltn", "sport", "= :18300").isBlank()))
                    .as("18300 free once its proxies are gone").isTrue();
            try (ServerSocketChannel squatter = whoAsks(host, "0.0.0.0", 18300);
                 GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                         "unix://" + lab.socket())) {
                assertThat(mappingsOf(lab, "web")).as("at ready").extracting(m -> m.get("hostPort").asInt())
                        .containsExactly(18301);
                assertThat(serve.stderr()).contains("not published for container", "host port *:18300/tcp is in use",
                        processName() + " (pid " + ProcessHandle.current().pid() + ") listens on ")
                        .containsPattern("listens on (0\\.0\\.0\\.0|\\[::\\]):18300/tcp");
                Probe.awaitHttp(outside, HOST, 18301, "/index.html", "web");
                assertThat(Probe.httpGet(outside, HOST, 18300, "/")).as("the process keeps its port").isEqualTo("192.0.2.2\n");
                assertThat(squatter.isOpen()).isTrue();
            }
        });
    }

    @Test
    void aPortDockerProxyHoldsIsPublishedOverAndAnsweredByGatunsDnat() throws Exception {
        inLab(DockerLab.Networking.GATUN_FOLLOWS_WITH_PROXY, (lab, outside) -> {
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                lab.dockerOk(run("web", "18310:80").toArray(String[]::new));
                NetworkNamespace host = NetworkNamespace.named(lab.namespace());
                assertThat(Oracle.in(host, "ss", "-Hltnp", "sport", "= :18310")).as("the positive control: the proxy holds it")
                        .contains("docker-proxy");
                assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "web").size() == 1)).isTrue();
                // Asked after the mapping is in (before it, the proxy answers).
                Probe.awaitHttp(outside, HOST, 18310, "/index.html", "web");
                // The connection went to the container by DNAT (its reply comes from the container's address), not
                // through the proxy (whose connection would end on the host's own address).
                String flows = Oracle.in(host, "conntrack", "-L", "-p", "tcp", "--orig-port-dst", "18310");
                assertThat(flows).contains("src=" + lab.containerIp("web") + " dst=192.0.2.2 sport=80");
                assertThat(serve.stderr()).doesNotContain("not published");
            }
        });
    }

    @Test
    void aDockerdRestartLeavesExactlyTheMappingsOfTheContainersRunningAfterIt() throws Exception {
        inLab((lab, outside) -> {
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                List<String> keeps = run("keeps", "18320:80");
                keeps.addAll(2, List.of("--restart", "always"));
                lab.dockerOk(keeps.toArray(String[]::new));
                lab.dockerOk(run("stops", "18321:80").toArray(String[]::new));
                Probe.awaitHttp(outside, HOST, 18320, "/index.html", "keeps");
                Probe.awaitHttp(outside, HOST, 18321, "/index.html", "stops");
                String stopsId = id(lab, "stops");
                String keepsId = id(lab, "keeps");

                // dockerd dies (its containers go on under containerd): the kernel keeps what it has, so their ports
                // answer while it is down, and the follower tries again, less often each time.
                ProcessHandle dockerd = ProcessHandle.of(lab.dockerdPid()).orElseThrow();
                dockerd.destroyForcibly();
                dockerd.onExit().get(10, TimeUnit.SECONDS);
                assertThat(Probe.poll(SETTLE, () -> serve.stderr().contains("trying again in 1000 ms")))
                        .as("a second try after a longer wait: %s", serve.stderr()).isTrue();
                Probe.awaitHttp(outside, HOST, 18320, "/index.html", "keeps");
                Probe.awaitHttp(outside, HOST, 18321, "/index.html", "stops");
                assertThat(GatunCli.mappingsOf(lab.namespace(), "docker:" + keepsId)).as("while dockerd is down").hasSize(1);
                // Back, dockerd stops what ran before it died and starts again what has a restart policy.
                lab.startDockerd();
                assertThat(lab.dockerOk("inspect", "-f", "{{.State.Running}}", "stops").out().strip()).isEqualTo("false");
                assertThat(Probe.poll(SETTLE, () -> GatunCli.mappingsOf(lab.namespace(), "docker:" + stopsId).isEmpty()))
                        .as("the mappings of the container the restart stopped").isTrue();
                Probe.awaitHttp(outside, HOST, 18320, "/index.html", "keeps");
                String ip = lab.containerIp("keeps");
                assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "keeps").stream()
                        .map(m -> m.get("containerIp").asText()).toList().equals(List.of(ip))))
                        .as("one mapping for the restarted container, to its address now").isTrue();
                refused(outside, 18321);
                assertThat(serve.stderr()).contains("trying again");
                kernelMatchesDockerd(lab, serve);
            }
        });
    }

    /**
     * The first field report with the workflow unchanged: another process holds the xtables lock
     * while 20 {@code docker run -d -p} run one after another; every one succeeds and answers,
     * and the lock is still held after the last.
     */
    @Test
    void twentyDockerRunsWhileAnotherProcessHoldsTheXtablesLockAllSucceedAndAnswer() throws Exception {
        inLab((lab, outside) -> {
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                Process holder = XtablesLockHolder.hold(600);
                try {
                    for (int i = 0; i < 20; i++) {
                        DockerLab.Result r = lab.docker(run("c" + i, (18400 + i) + ":80").toArray(String[]::new));
                        assertThat(r.code()).as("docker run %d while the lock is held: %s", i, r.err()).isZero();
                    }
                    for (int i = 0; i < 20; i++) {
                        Probe.awaitHttp(outside, HOST, 18400 + i, "/index.html", "c" + i);
                    }
                    assertThat(holder.isAlive()).as("the lock was held all along").isTrue();
                } finally {
                    XtablesLockHolder.release(holder);
                }
            }
        });
    }
    /**
     * On an iptables-nft host with Docker's chains (left from its iptables mode) and ufw's, both
     * dropping forwarded traffic: a whole run of the serve (its start and first reconcile,
     * containers, networks, a flush it repairs, its stop) starts no process. The serve runs under
     * {@code strace -f} from its launcher's first line; what the launcher runs before it execs the
     * serve's JVM is the launcher's, and nothing may follow that exec. The positive controls: the
     * trace sees the launcher's exec and the serve's netlink writes, and ports answer through the
     * drops.
     */
    @Test
    void noProcessIsStartedOnAnIptablesNftHostWithDockersAndUfwsChains() throws Exception {
        inLab((lab, outside) -> {
            NetworkNamespace host = NetworkNamespace.named(lab.namespace());
            HostFirewalls.apply(host, "iptables-nft", HostFirewalls.DOCKER);
            HostFirewalls.apply(host, "iptables-nft", HostFirewalls.UFW);
            Path trace = Files.createTempFile("gatun-serve", ".strace");
            try {
                try (GatunServe serve = GatunServe.startWith(List.of("strace", "-f", "-qq", "-s", "256", "-e",
                                "trace=execve,execveat,sendto,sendmsg", "-o", trace.toString()),
                        List.of("--netns", lab.namespace(), "serve", "--docker", "--docker-host", "unix://" + lab.socket()),
                        null)) {
                    lab.dockerOk("network", "create", "--subnet", "172.31.251.0/24", "appnet");
                    lab.dockerOk(run("web", "18600:80", "5354:53/udp").toArray(String[]::new));
                    List<String> onApp = run("app", "18601:80");
                    onApp.addAll(2, List.of("--network", "appnet"));
                    lab.dockerOk(onApp.toArray(String[]::new));
                    assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "app").size() == 1 && mappingsOf(lab, "web").size() == 2))
                            .as("published; the serve: %s", serve.stderr()).isTrue();
                    Probe.awaitHttp(outside, HOST, 18600, "/index.html", "web");
                    Probe.awaitHttp(outside, HOST, 18601, "/index.html", "app");
                    Probe.awaitUdp(outside, HOST, 5354, "web-udp");
                    Oracle.in(host, "nft", "flush", "table", "inet", "gatun");
                    // Docker's subnets are adjacent (172.31.250.0/24, 172.31.251.0/24): the repair must take them.
                    Probe.awaitHttp(outside, HOST, 18600, "/index.html", "web");
                    assertThat(serve.stderr()).doesNotContain("repair failed");
                    lab.dockerOk("rm", "-f", "app");
                    lab.dockerOk("network", "rm", "appnet");
                    refusedSoon(outside, 18601);
                    // The serve (strace's child, the launcher having exec'd its JVM) stopped as a service manager
                    // stops it; strace ends with it.
                    ProcessHandle jvm = ProcessHandle.of(serve.pid()).orElseThrow().children().findFirst().orElseThrow();
                    jvm.destroy();
                    jvm.onExit().get(30, TimeUnit.SECONDS);
                }
                List<String> traced = Files.readAllLines(trace);
                int serveExec = -1;
                for (int i = 0; i < traced.size(); i++) {
                    if (traced.get(i).matches("\\d+ +execve\\(\"[^\"]*/bin/java\", .*\"-jar\".*")) {
                        serveExec = i;
                    }
                }
                assertThat(serveExec).as("the launcher's exec of the serve's JVM in the trace").isNotNegative();
                List<String> after = traced.subList(serveExec + 1, traced.size());
                assertThat(after).as("the trace sees the serve's netlink writes").anyMatch(l -> l.matches(".*send(to|msg)\\(.*"));
                assertThat(after.stream().filter(l -> l.contains("execve")).toList()).as("processes started by the serve").isEmpty();
                String saved = Oracle.in(host, "iptables-nft-save");
                assertThat(saved).contains("-A DOCKER-USER -j GATUN-ALLOW", "-A GATUN-ALLOW -i docker0 -j ACCEPT",
                        "-A ufw-before-forward -j ufw-user-forward");
            } finally {
                Files.deleteIfExists(trace);
            }
        });
    }

    private static void refusedSoon(NetworkNamespace outside, int port) {
        assertThat(Probe.poll(SETTLE, () -> {
            try {
                Probe.httpGet(outside, HOST, port, "/index.html");
                return false;
            } catch (IOException e) {
                return true;
            }
        })).as("port %d refused once its container is gone", port).isTrue();
    }

    /** A container's network namespace, entered through its process: /proc/PID/ns/net. */
    private static NetworkNamespace namespaceOf(DockerLab lab, String container) {
        String pid = lab.dockerOk("inspect", "-f", "{{.State.Pid}}", container).out().strip();
        return NetworkNamespace.at(Path.of("/proc", pid, "ns", "net"));
    }

    /**
     * As an attacker tries it (core's AttackerTrafficSuite does the same on the driver): UDP in
     * Ethernet frames written byte by byte and sent with an AF_PACKET socket, to 127.0.0.1. From a
     * container to docker0's MAC, the host's loopback-only services are not reached; from the LAN to
     * the host's MAC, a port published on 127.0.0.1 only is not. Each refusal has a control made
     * the same way, which arrives. The receivers are inboxes of the test's: on the host, and in the
     * container's namespace (a frame that passed would be answered from 127.0.0.1, which the
     * outside drops as a martian, so an answer could not tell).
     */
    @Test
    void framesTo127001ReachNeitherTheHostsLoopbackFromAContainerNorALocalhostPortFromTheLan() throws Exception {
        inLab((lab, outside) -> {
            NetworkNamespace host = NetworkNamespace.named(lab.namespace());
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                // No server of its own on 53: the test's inbox in its namespace is what receives.
                lab.dockerOk("run", "-d", "--init", "--name", "target", "-p", "127.0.0.1:5360:53/udp", "-p", "5361:53/udp",
                        DockerLab.IMAGE, "sleep", "3600");
                assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "target").size() == 2))
                        .as("both published; the serve: %s", serve.stderr()).isTrue();
                // The door: dockerd without its userland proxy turns it on for docker0 itself, and gatun does for a
                // bridge it adopts; with --iptables=false, dockerd's own drop is not there, gatun's is.
                assertThat(new Sysctls(host).read("ipv4/conf/docker0/route_localnet")).as("route_localnet of docker0")
                        .isEqualTo("1");
                NetworkNamespace container = namespaceOf(lab, "target");
                InetAddress containerIp = InetAddress.ofLiteral(lab.containerIp("target"));
                InetAddress docker0 = InetAddress.ofLiteral(DockerLab.DOCKER0_ADDRESS.split("/")[0]);
                try (UdpInbox loopbackOnly = UdpInbox.bind(host, "127.0.0.1", 9999);
                     UdpInbox onDocker0 = UdpInbox.bind(host, docker0.getHostAddress(), 9998);
                     UdpInbox inContainer = UdpInbox.bind(container, containerIp.getHostAddress(), 53)) {
                    Wire fromContainer = Wire.to(container, "eth0", host, "docker0");
                    Wire lan = Wire.to(outside, "eth0", host, "gout");

                    CraftedFrames.udp(fromContainer, containerIp, 40001, docker0, 9998, "control from the container");
                    CraftedFrames.udp(fromContainer, containerIp, 40002, LOCALHOST, 9999, "to the host's 127.0.0.1");
                    CraftedFrames.udp(lan, OUTSIDE, 40003, InetAddress.ofLiteral(HOST), 5361, "control from the LAN");
                    CraftedFrames.udp(lan, OUTSIDE, 40004, LOCALHOST, 5360, "to 127.0.0.1:5360 from the LAN");

                    assertThat(onDocker0.got("control from the container", ARRIVES)).as("control: to docker0's address")
                            .isTrue();
                    assertThat(inContainer.got("control from the LAN", ARRIVES))
                            .as("control: to the host's address, a port published on every address").isTrue();
                    assertThat(loopbackOnly.got("to the host's 127.0.0.1", GRACE))
                            .as("from a container, a service of the host bound to 127.0.0.1").isFalse();
                    assertThat(inContainer.got("to 127.0.0.1:5360 from the LAN", GRACE))
                            .as("from the LAN, a port published on 127.0.0.1 only").isFalse();
                }
            }
        });
    }

    /** Whether {@code inbox} holds a datagram "PREFIX-N" of a {@link SteadyUdpClient} with N above {@code sent}. */
    private static boolean sentAfter(UdpInbox inbox, String prefix, int sent) {
        return inbox.received().stream()
                .anyMatch(p -> p.startsWith(prefix) && Integer.parseInt(p.substring(prefix.length())) > sent);
    }

    /**
     * UDP clients that keep sending from one source port while their container restarts, as a
     * game client or a DNS forwarder does: while the port is unpublished their datagrams go to the
     * host itself, and conntrack keeps that entry for as long as they keep coming. The publish at
     * the restart deletes it, so their next datagram is translated to the container. One client
     * sends every 100 ms; one every 10 ms is sure to send while the port is unpublished (0.07 to
     * 1.3 s here). The judges: conntrack's events, nft monitor for the moment of the publish, and an
     * inbox in the restarted container.
     */
    @Test
    void udpClientsThatKeptSendingThroughADockerRestartGoToTheContainerWithinASecondOfItsPublish() throws Exception {
        inLab((lab, outside) -> {
            NetworkNamespace host = NetworkNamespace.named(lab.namespace());
            try (GatunServe serve = GatunServe.start(lab.namespace(), null, "--docker", "--docker-host",
                    "unix://" + lab.socket())) {
                // No server of its own on 53: the test's inbox in its namespace is what receives.
                lab.dockerOk("run", "-d", "--init", "--name", "steady", "-p", "5362:53/udp", DockerLab.IMAGE, "sleep", "3600");
                assertThat(Probe.poll(SETTLE, () -> mappingsOf(lab, "steady").size() == 1))
                        .as("published; the serve: %s", serve.stderr()).isTrue();
                try (ConntrackEvents events = ConntrackEvents.start(host);
                     SteadyUdpClient steady = SteadyUdpClient.start(outside, HOST, 5362, "steady", EVERY);
                     SteadyUdpClient rapid = SteadyUdpClient.start(outside, HOST, 5362, "rapid", Duration.ofMillis(10))) {
                    // Closed before the restart: its socket would keep the old namespace.
                    try (UdpInbox before = UdpInbox.bind(namespaceOf(lab, "steady"), lab.containerIp("steady"), 53)) {
                        assertThat(before.gotAnyStartingWith("steady-", ARRIVES)).as("before the restart").isTrue();
                        assertThat(before.gotAnyStartingWith("rapid-", ARRIVES)).as("before the restart").isTrue();
                    }
                    long published;
                    String ip;
                    try (NftMonitor monitor = NftMonitor.start(host)) {
                        lab.dockerOk("restart", "steady");
                        ip = lab.containerIp("steady");
                        // The restarted container receives once it runs, after docker restart returned.
                        try (UdpInbox inbox = UdpInbox.bind(namespaceOf(lab, "steady"), ip, 53)) {
                            Pattern publish = Pattern.compile("(add|create) element inet gatun ports4 \\{ udp \\. 5362 ");
                            Long[] seen = new Long[1];
                            assertThat(Probe.poll(SETTLE, () -> (seen[0] = monitor.first(publish)) != null))
                                    .as("published again; the serve: %s", serve.stderr()).isTrue();
                            published = seen[0];
                            // Only what they send from now on counts: what they sent before the unpublish waited in the
                            // host's neighbour queue for the container's address, and arrives once the restarted one
                            // answers ARP. That holds the new datagrams too, up to ARP's next try a second on: hence
                            // ARRIVES here, and the second is conntrack's, below.
                            int steadyFrom = steady.sent();
                            int rapidFrom = rapid.sent();
                            assertThat(Probe.poll(ARRIVES, () -> sentAfter(inbox, "steady-", steadyFrom)))
                                    .as("the client that kept sending every 100 ms; received %s; conntrack: %s; the serve: %s",
                                            inbox.received(), events.events(), serve.stderr()).isTrue();
                            assertThat(Probe.poll(ARRIVES, () -> sentAfter(inbox, "rapid-", rapidFrom)))
                                    .as("the client that kept sending every 10 ms; received %s", inbox.received()).isTrue();
                            try (SteadyUdpClient fresh = SteadyUdpClient.start(outside, HOST, 5362, "fresh", EVERY)) {
                                assertThat(inbox.gotAnyStartingWith("fresh-", ARRIVES))
                                        .as("control: a client from a new source port").isTrue();
                            }
                        }
                    }
                    // Conntrack's side: entries to the host itself, made while the port was unpublished ...
                    List<ConntrackEvents.Event> stale = events.events().stream().filter(e -> e.nanos() < published
                            && e.text().contains("[NEW]") && e.text().contains("dport=5362 [UNREPLIED] src=" + HOST + " "))
                            .toList();
                    assertThat(stale).as("entries of clients that sent while unpublished: %s", events.events()).isNotEmpty();
                    // ... and each client's next entry, to the container, within a second of the publish.
                    for (ConntrackEvents.Event e : stale) {
                        String port = e.text().replaceAll(".* sport=(\\d+) dport=5362 .*", "$1");
                        ConntrackEvents.Event next = events.await(e, l -> l.contains("[NEW]")
                                && l.contains("sport=" + port + " dport=5362 [UNREPLIED] src=" + ip + " dst=192.0.2.2 sport=53 "),
                                Duration.ZERO);
                        assertThat(next).as("port %s's entry to the container after its stale one: %s", port, events.events())
                                .isNotNull();
                        assertThat(Duration.ofNanos(next.nanos() - published)).as("port %s's, from the publish", port)
                                .isLessThanOrEqualTo(Duration.ofSeconds(1));
                    }
                }
            }
        });
    }
}
