package dev.gatun.cli.docker;

import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.cli.testing.PluginHttp;
import dev.gatun.cli.testing.PluginLab;
import dev.gatun.cli.testing.Probe;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun as Docker's network plugin, from outside: a real dockerd 20.10 ({@link DockerLab}) in a
 * private namespace that plays the host, {@code gatun --netns LAB serve --docker-plugin NAME},
 * real containers, and the judges nobody here wrote: HTTP and UDP from an outside namespace,
 * {@code nft -j list ruleset} and {@code ip -o link} in the lab's namespace, and
 * {@code gatun --json ls / net ls}. Each test has a lab of its own.
 *
 * <p>What Docker 20.10 cannot show: {@code docker port C} and NetworkSettings.Ports stay empty
 * for every container on a remote (plugin) network, whatever the plugin answers to
 * EndpointOperInfo (the daemon type-asserts the JSON-decoded value to []types.PortBinding, which
 * never matches). So published ports are checked through {@code gatun ls} and real traffic.
 *
 * <p>dockerd runs as a real host runs it ({@link PluginLab#defaultNetworking()}, DOCKER_BRIDGE:
 * iptables on, FORWARD policy DROP, docker0): gatun's published ports get through Docker's
 * FORWARD by a jump to gatun's own chain in DOCKER-USER.
 */
class DockerPluginIT {

    private static final String HOST = Lab.HOST_ADDRESS; // the lab namespace's address towards outside
    private static final String SUBNET = "10.89.0.0/24";

    /** A container command: busybox httpd on 80 serving {@code text} at /index.html, then {@code then}. */
    private static String web(String text, String then) {
        return "mkdir -p /www && echo " + text + " > /www/index.html && httpd -p 80 -h /www && " + then;
    }

    private static String web(String text) {
        return web(text, "exec sleep 3600");
    }

    // ---- 1 ------------------------------------------------------------------------------

    @Test
    void publishedTcpAndUdpPortsAnswerFromOutsideAndByHairpinAndSurviveSigterm() throws Exception {
        try (PluginLab lab = PluginLab.start()) {
            GatunServe serve = lab.serve();
            assertThat(serve.readyLine()).startsWith("ready");
            assertThat(lab.socket()).exists();
            assertThat(Files.getPosixFilePermissions(lab.socket())).as("mode of %s", lab.socket())
                    .isEqualTo(PosixFilePermissions.fromString("rw-------"));

            String netId = lab.createNetwork("--subnet", SUBNET, "net1");
            JsonNode nets = GatunCli.networks(lab.ns());
            assertThat(nets).as("gatun net ls after docker network create").hasSize(1);
            JsonNode net = nets.get(0);
            assertThat(net.get("name").asText()).isEqualTo(netId.substring(0, 12));
            assertThat(texts(net.get("subnets"))).containsExactly(SUBNET);
            assertThat(texts(net.get("gateways"))).containsExactly("10.89.0.1");
            assertThat(Probe.links(lab.host, "bridge")).contains(net.get("bridge").asText());

            lab.docker.dockerOk("run", "-d", "--name", "web", "--network", "net1", "-p", "18080:80", "-p", "18081:81/udp",
                    DockerLab.IMAGE, "sh", "-c", web("hello-web", "exec udpreply 81 udp-web"));
            String ep = lab.docker.endpointId("web");
            String ip = lab.docker.containerIp("web");
            assertThat(ip).startsWith("10.89.0.");

            Map<String, JsonNode> byProto = byProtocol(GatunCli.mappingsOf(lab.ns(), ep));
            assertThat(byProto.keySet()).as("mappings owned by endpoint %s: %s", ep, GatunCli.mappings(lab.ns()))
                    .containsExactly("tcp", "udp");
            assertMapping(byProto.get("tcp"), net, 18080, ip, 80);
            assertMapping(byProto.get("udp"), net, 18081, ip, 81);

            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "hello-web");
            Probe.awaitUdp(lab.outside, HOST, 18081, "udp-web");

            // Hairpin: a container on the same bridge, through the published port on the host's address.
            // (timeout, not wget -T: this busybox's wget segfaults with -T.)
            DockerLab.Result hairpin = lab.docker.dockerOk("run", "--rm", "--network", "net1", DockerLab.IMAGE,
                    "timeout", "10", "wget", "-qO-", "http://" + HOST + ":18080/index.html");
            assertThat(hairpin.out().strip()).isEqualTo("hello-web");

            // SIGTERM: exit 0, the socket goes, the kernel keeps everything, traffic still flows.
            JsonNode ruleset = Probe.ruleset(lab.host);
            List<String> links = Probe.links(lab.host);
            assertThat(serve.terminate()).as("exit code of %s on SIGTERM; stderr:\n%s", serve.describe(), serve.stderr()).isZero();
            assertThat(serve.stdoutLines()).as("serve's stdout: one ready line").hasSize(1);
            assertThat(lab.socket()).as("the plugin socket after SIGTERM").doesNotExist();
            assertThat(Probe.ruleset(lab.host)).as("the ruleset after serve stopped").isEqualTo(ruleset);
            assertThat(Probe.links(lab.host)).as("the links after serve stopped").isEqualTo(links);
            assertThat(Probe.httpNow(lab.outside, HOST, 18080, "/index.html")).isEqualTo("hello-web");

            // Started again, serve rebuilds its state from the kernel: Docker removes the container through it.
            lab.restartServe();
            assertThat(GatunCli.mappingsOf(lab.ns(), ep)).hasSize(2);
            lab.docker.dockerOk("rm", "-f", "web");
            assertThat(GatunCli.mappings(lab.ns())).as("gatun ls after docker rm -f").isEmpty();
            assertThat(veths(lab)).as("veths after docker rm -f").isEmpty();
        }
    }

    // ---- 2 ------------------------------------------------------------------------------

    @Test
    void aPortWithoutHostPortGetsTheLowestFreePortOfTheNamespacesRange() {
        // A range of the lab's own, unlike any default: serve must read the namespace's.
        try (PluginLab lab = PluginLab.start(ns -> Oracle.in(ns, "sh", "-c",
                "echo '41000 41999' > /proc/sys/net/ipv4/ip_local_port_range"))) {
            String[] range = Oracle.in(lab.host, "cat", "/proc/sys/net/ipv4/ip_local_port_range").strip().split("\\s+");
            int low = Integer.parseInt(range[0]);
            int high = Integer.parseInt(range[1]);
            assertThat(low).isEqualTo(41000);
            lab.createNetwork("--subnet", SUBNET, "net1");

            // The lowest port of the range is taken, by name.
            lab.docker.dockerOk("run", "-d", "--name", "holder", "--network", "net1", "-p", low + ":80",
                    DockerLab.IMAGE, "sh", "-c", web("holder"));
            lab.docker.dockerOk("run", "-d", "--name", "auto", "--network", "net1", "-p", "80",
                    DockerLab.IMAGE, "sh", "-c", web("auto"));
            String ep = lab.docker.endpointId("auto");
            List<JsonNode> mine = GatunCli.mappingsOf(lab.ns(), ep);
            assertThat(mine).as("mappings owned by %s: %s", ep, GatunCli.mappings(lab.ns())).hasSize(1);
            JsonNode m = mine.getFirst();
            assertThat(m.get("protocol").asText()).isEqualTo("tcp");
            assertThat(m.get("containerPort").asInt()).isEqualTo(80);
            assertThat(m.get("containerIp").asText()).isEqualTo(lab.docker.containerIp("auto"));
            assertThat(m.get("hostIp").isNull()).as("hostIp of %s", m).isTrue();
            assertThat(m.get("hostPort").asInt()).as("host port of %s: the lowest free one of %d-%d, %d being held", m, low, high, low)
                    .isEqualTo(low + 1);
            Probe.awaitHttp(lab.outside, HOST, low + 1, "/index.html", "auto");
            Probe.awaitHttp(lab.outside, HOST, low, "/index.html", "holder");

            // Once the holder is gone, the lowest port is free again.
            lab.docker.dockerOk("rm", "-f", "holder");
            lab.docker.dockerOk("run", "-d", "--name", "auto2", "--network", "net1", "-p", "80",
                    DockerLab.IMAGE, "sh", "-c", web("auto2"));
            List<JsonNode> second = GatunCli.mappingsOf(lab.ns(), lab.docker.endpointId("auto2"));
            assertThat(second).as("mappings of auto2: %s", GatunCli.mappings(lab.ns())).hasSize(1);
            assertThat(second.getFirst().get("hostPort").asInt()).isEqualTo(low);
            assertThat(second.getFirst().get("containerIp").asText()).isEqualTo(lab.docker.containerIp("auto2"));
        }
    }

    // ---- 2b -----------------------------------------------------------------------------

    /**
     * Docker hands a removed container's address to the next container at once, with a new
     * interface. The host may still have the old one's MAC for that address in its neighbour
     * table (REACHABLE for 15 to 45 s after the last traffic): the published port must reach the
     * new container right away all the same (Docker's bridge derives the MAC from the address).
     */
    @Test
    void aContainerAddressReusedAtOnceIsReachableAtOnce() {
        try (PluginLab lab = PluginLab.start()) {
            lab.createNetwork("--subnet", SUBNET, "net1");
            // Another port keeps the bridge's carrier up: with the last port gone the kernel would
            // flush the bridge's neighbours and hide the problem.
            lab.docker.dockerOk("run", "-d", "--name", "keeper", "--network", "net1", DockerLab.IMAGE, "sleep", "3600");
            lab.docker.dockerOk("run", "-d", "--name", "first", "--network", "net1", "-p", "18080:80",
                    DockerLab.IMAGE, "sh", "-c", web("first"));
            String ip = lab.docker.containerIp("first");
            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "first");

            lab.docker.dockerOk("rm", "-f", "first");
            lab.docker.dockerOk("run", "-d", "--name", "second", "--network", "net1", "-p", "18080:80",
                    DockerLab.IMAGE, "sh", "-c", web("second"));
            assertThat(lab.docker.containerIp("second")).as("Docker reuses the address").isEqualTo(ip);
            // The server inside is up (asked from inside the container, no neighbour involved)...
            long deadline = System.nanoTime() + Probe.SERVICE_START.toNanos();
            while (lab.docker.docker("exec", "second", "timeout", "5", "wget", "-qO-", "http://127.0.0.1/index.html").code() != 0) {
                assertThat(System.nanoTime()).as("httpd in the container did not start").isLessThan(deadline);
                Probe.sleep(100);
            }
            // ...so the one thing left between outside and it is the host's path to the address.
            String neighbours = Oracle.in(lab.host, "ip", "neigh");
            try {
                assertThat(Probe.httpNow(lab.outside, HOST, 18080, "/index.html")).isEqualTo("second");
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nthe lab's neighbour table before the request:\n" + neighbours
                        + "second's interface: " + lab.docker.dockerOk("exec", "second", "ip", "-o", "link", "show", "eth0").out(), e);
            }
        }
    }

    // ---- network options ----------------------------------------------------------------

    @Test
    void networkOptionsReachGatunAndTheKernel() throws Exception {
        try (PluginLab lab = PluginLab.start();
             ReplyServers outsideServer = new ReplyServers().tcp(lab.outside, "0.0.0.0", 9999, "outside")) {
            String netId = lab.createNetwork("--subnet", "10.90.0.0/24", "--gateway", "10.90.0.254", "--internal",
                    "-o", "gatun.icc=false", "-o", "gatun.bridge=gtbr0", "-o", "gatun.mtu=1400", "-o", "gatun.counters=true",
                    "inet1");
            JsonNode nets = GatunCli.networks(lab.ns());
            assertThat(nets).hasSize(1);
            JsonNode net = nets.get(0);
            assertThat(net.get("name").asText()).isEqualTo(netId.substring(0, 12));
            assertThat(net.get("bridge").asText()).isEqualTo("gtbr0");
            assertThat(texts(net.get("subnets"))).containsExactly("10.90.0.0/24");
            assertThat(texts(net.get("gateways"))).containsExactly("10.90.0.254");
            assertThat(net.get("icc").asBoolean()).as("icc of %s", net).isFalse();
            assertThat(net.get("internal").asBoolean()).as("internal of %s", net).isTrue();
            assertThat(net.get("mtu").asInt()).isEqualTo(1400);
            assertThat(net.get("counters").asBoolean()).as("counters of %s", net).isTrue();
            assertThat(Oracle.in(lab.host, "nft", "list", "set", "inet", "gatun", "counted")).contains("\"gtbr0\"");
            assertThat(Oracle.in(lab.host, "cat", "/sys/class/net/gtbr0/mtu").strip()).isEqualTo("1400");
            assertThat(Oracle.in(lab.host, "cat", "/sys/class/net/gtbr0/address").strip()).isEqualTo(net.get("mac").asText());

            lab.docker.dockerOk("run", "-d", "--name", "ca", "--network", "inet1", DockerLab.IMAGE, "sh", "-c", web("ca"));
            lab.docker.dockerOk("run", "-d", "--name", "cb", "--network", "inet1", DockerLab.IMAGE, "sleep", "3600");
            assertThat(lab.docker.dockerOk("exec", "cb", "cat", "/sys/class/net/eth0/mtu").out().strip()).isEqualTo("1400");
            String ipA = lab.docker.containerIp("ca");
            long deadline = System.nanoTime() + Probe.SERVICE_START.toNanos();
            while (lab.docker.docker("exec", "ca", "timeout", "5", "wget", "-qO-", "http://127.0.0.1/index.html").code() != 0) {
                assertThat(System.nanoTime()).as("httpd in a did not start").isLessThan(deadline);
                Probe.sleep(100);
            }
            // icc=false: b cannot reach a on the same bridge; control: a's httpd answers from the host,
            // where no forward rule stands between.
            assertThat(Probe.httpNow(lab.host, ipA, 80, "/index.html")).as("control: a from the host").isEqualTo("ca");
            DockerLab.Result icc = lab.docker.docker("exec", "cb", "timeout", "3", "wget", "-qO-", "http://" + ipA + "/index.html");
            assertThat(icc.code()).as("b fetching from a with icc=false: %s", icc.out()).isNotZero();
            // internal: no way out to the outside namespace (reachable from the lab's namespace itself), while
            // b's own link works: the host's address on the bridge answers it (no forwarding there).
            assertThat(ReplyServers.tcpFetch(lab.host, "192.0.2.2", 9999)).isEqualTo("outside");
            try (ReplyServers onTheBridge = new ReplyServers().tcp(lab.host, "10.90.0.254", 9998, "gateway")) {
                DockerLab.Result gateway = lab.docker.docker("exec", "cb", "timeout", "3", "nc", "10.90.0.254", "9998");
                assertThat(gateway.out()).as("control: b reaching the host's address on its bridge: %s", gateway.err())
                        .contains("gateway");
            }
            DockerLab.Result out = lab.docker.docker("exec", "cb", "timeout", "3", "nc", "192.0.2.2", "9999");
            assertThat(out.out()).as("b reaching outside from an internal network").doesNotContain("outside");
        }
    }

    // ---- 3 ------------------------------------------------------------------------------

    @Test
    void dockerRmAndNetworkRmLeaveNoElementNoVethNoBridge() {
        try (PluginLab lab = PluginLab.start()) {
            List<String> bridgesBefore = Probe.links(lab.host, "bridge"); // docker0 where Docker has its own networking
            lab.createNetwork("--subnet", SUBNET, "net1");
            JsonNode net = GatunCli.networks(lab.ns()).get(0);
            String bridge = net.get("bridge").asText();
            lab.docker.dockerOk("run", "-d", "--name", "c1", "--network", "net1", "-p", "18080:80",
                    DockerLab.IMAGE, "sh", "-c", web("c1"));
            lab.docker.dockerOk("run", "-d", "--name", "c2", "--network", "net1", DockerLab.IMAGE, "sleep", "3600");
            String ep1 = lab.docker.endpointId("c1");
            String ip1 = lab.docker.containerIp("c1");
            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "c1");
            assertThat(veths(lab)).as("one veth per container").hasSize(2);
            assertThat(Probe.elements(lab.host)).as("nft elements").anyMatch(e -> e.contains(ip1)); // what must go

            lab.docker.dockerOk("rm", "-f", "c1");
            assertThat(GatunCli.mappingsOf(lab.ns(), ep1)).isEmpty();
            assertThat(GatunCli.mappings(lab.ns())).isEmpty();
            assertThat(Probe.elements(lab.host)).as("nft elements after docker rm -f c1")
                    .noneMatch(e -> e.contains(ip1) || e.contains(ep1));
            assertThat(veths(lab)).as("veths after docker rm -f c1").hasSize(1);

            lab.docker.dockerOk("rm", "-f", "c2");
            assertThat(veths(lab)).as("veths after docker rm -f c2").isEmpty();

            lab.docker.dockerOk("network", "rm", "net1");
            assertThat(GatunCli.networks(lab.ns())).as("gatun net ls after docker network rm").isEmpty();
            assertThat(Probe.links(lab.host)).as("links after docker network rm").doesNotContain(bridge);
            assertThat(Probe.links(lab.host, "bridge")).as("bridges after docker network rm").isEqualTo(bridgesBefore);
            assertThat(Probe.elements(lab.host)).as("nft elements after docker network rm")
                    .noneMatch(e -> e.contains("10.89.0.") || e.contains(bridge));
        }
    }

    // ---- 4 ------------------------------------------------------------------------------

    @Test
    void aFlushedRulesetIsRepairedWithinOneSecond() throws Exception {
        try (PluginLab lab = PluginLab.start()) {
            lab.createNetwork("--subnet", SUBNET, "net1");
            lab.docker.dockerOk("run", "-d", "--name", "web", "--network", "net1", "-p", "18080:80",
                    DockerLab.IMAGE, "sh", "-c", web("web"));
            String ep = lab.docker.endpointId("web");
            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "web");
            // gatun's own tables only: with Docker's iptables on, nft flush ruleset takes Docker's
            // tables too, and only dockerd puts them back (at its next start).
            JsonNode before = Probe.gatunRuleset(lab.host);
            assertThat(Probe.tables(lab.host)).as("tables").anyMatch(t -> t.endsWith(" gatun"));
            assertThat(Probe.elements(lab.host)).as("the published element, owned by the endpoint")
                    .anyMatch(e -> e.contains("18080") && e.contains(ep));

            for (int round = 1; round <= 2; round++) { // not a one-time repair
                GatunServe serve = lab.serve();
                int mark = serve.stderrMark();
                Oracle.in(lab.host, "nft", "flush", "ruleset");
                boolean back = Probe.poll(Duration.ofSeconds(1), () -> Probe.gatunRuleset(lab.host).equals(before));
                assertThat(back).as("round %d: gatun's table and elements are back within 1 s of nft flush ruleset;"
                        + "\nnow: %s\nexpected: %s\nserve's stderr:\n%s", round, Probe.gatunRuleset(lab.host), before, serve.stderr()).isTrue();
                assertThat(serve.awaitStderr(mark, "repaired", Duration.ofSeconds(2)))
                        .as("round %d: serve logs the repair; its stderr:\n%s", round, serve.stderr()).isTrue();
                assertThat(Probe.httpNow(lab.outside, HOST, 18080, "/index.html")).isEqualTo("web");
            }
        }
    }

    // ---- 5 ------------------------------------------------------------------------------

    @Test
    void twentyContainersStartedAtOnceWithFourPortsEachAllAnswer() throws Exception {
        int containers = 20;
        int ports = 4;
        try (PluginLab lab = PluginLab.start()) {
            lab.createNetwork("--subnet", SUBNET, "net1");
            CountDownLatch go = new CountDownLatch(1);
            List<Future<DockerLab.Result>> runs = new ArrayList<>();
            try (ExecutorService pool = Executors.newFixedThreadPool(containers)) {
                for (int i = 0; i < containers; i++) {
                    List<String> cmd = new ArrayList<>(List.of("run", "-d", "--name", "c" + i, "--network", "net1"));
                    StringBuilder script = new StringBuilder();
                    for (int k = 0; k < ports; k++) {
                        int port = 80 + k;
                        cmd.addAll(List.of("-p", (20000 + ports * i + k) + ":" + port));
                        script.append("mkdir -p /w").append(port).append(" && echo c").append(i).append('-').append(port)
                                .append(" > /w").append(port).append("/index.html && httpd -p ").append(port)
                                .append(" -h /w").append(port).append(" && ");
                    }
                    script.append("exec sleep 3600");
                    cmd.addAll(List.of(DockerLab.IMAGE, "sh", "-c", script.toString()));
                    runs.add(pool.submit(() -> {
                        Bounded.await(go, "the start of the docker runs");
                        return lab.docker.docker(cmd.toArray(String[]::new));
                    }));
                }
                go.countDown();
            }
            for (int i = 0; i < containers; i++) {
                DockerLab.Result r = Bounded.get(runs.get(i), "docker run of c" + i);
                assertThat(r.code()).as("docker run of c%d: %s", i, r.err()).isZero();
            }
            for (int i = 0; i < containers; i++) {
                for (int k = 0; k < ports; k++) {
                    Probe.awaitHttp(lab.outside, HOST, 20000 + ports * i + k, "/index.html", "c" + i + "-" + (80 + k));
                }
            }
            JsonNode all = GatunCli.mappings(lab.ns());
            assertThat(all).hasSize(containers * ports);
            Map<String, Long> perOwner = new TreeMap<>();
            all.forEach(m -> perOwner.merge(m.get("owner").asText(), 1L, Long::sum));
            assertThat(perOwner).hasSize(containers).allSatisfy((owner, n) -> assertThat(n).isEqualTo(ports));
            for (int i = 0; i < containers; i++) {
                assertThat(perOwner).containsKey(lab.docker.endpointId("c" + i));
            }
        }
    }

    // ---- 6 ------------------------------------------------------------------------------

    /** What must stay the same when the plugin refuses a request. */
    private record Snapshot(JsonNode mappings, JsonNode networks, JsonNode ruleset, List<String> veths) {}

    private static Snapshot snapshot(PluginLab lab) {
        return new Snapshot(GatunCli.mappings(lab.ns()), GatunCli.networks(lab.ns()), Probe.ruleset(lab.host), veths(lab));
    }

    @Test
    void badRequestsAreRefusedWithAnErrThatNamesTheProblemAndChangeNothing() {
        try (PluginLab lab = PluginLab.start()) {
            String netId = lab.createNetwork("--subnet", SUBNET, "net1");
            lab.docker.dockerOk("run", "-d", "--name", "holder", "--network", "net1", "-p", "18080:80",
                    DockerLab.IMAGE, "sh", "-c", web("holder"));
            String ep = lab.docker.endpointId("holder");
            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "holder");
            Snapshot before = snapshot(lab);
            assertThat(before.mappings()).hasSize(1);
            stillServes(lab);

            // Malformed JSON.
            PluginHttp.Response r = PluginHttp.post(lab.socket(), "NetworkDriver.CreateEndpoint",
                    "{\"NetworkID\": \"" + netId + "\", \"EndpointID\": ");
            assertRefused(r, "malformed JSON", "json");
            assertThat(snapshot(lab)).isEqualTo(before);
            stillServes(lab);

            // CreateEndpoint on a network nobody created.
            String unknownNet = "0badc0de".repeat(8);
            ObjectNode create = GatunCli.JSON.createObjectNode();
            create.put("NetworkID", unknownNet);
            create.put("EndpointID", randomId());
            create.putObject("Interface").put("Address", "10.89.0.77/24").put("AddressIPv6", "").put("MacAddress", "");
            create.putObject("Options");
            r = PluginHttp.post(lab.socket(), "NetworkDriver.CreateEndpoint", create);
            assertRefused(r, "unknown NetworkID", unknownNet.substring(0, 12));
            assertThat(snapshot(lab)).isEqualTo(before);
            stillServes(lab);

            // ProgramExternalConnectivity for a real endpoint with a port that cannot exist (Docker's shape).
            ObjectNode pec = GatunCli.JSON.createObjectNode();
            pec.put("NetworkID", netId);
            pec.put("EndpointID", ep);
            ObjectNode options = pec.putObject("Options");
            options.putArray("com.docker.network.endpoint.exposedports").addObject().put("Proto", 6).put("Port", 80);
            ArrayNode portmap = options.putArray("com.docker.network.portmap");
            portmap.addObject().put("Proto", 6).put("IP", "").put("Port", 80).put("HostIP", "")
                    .put("HostPort", 70000).put("HostPortEnd", 70000);
            r = PluginHttp.post(lab.socket(), "NetworkDriver.ProgramExternalConnectivity", pec);
            assertRefused(r, "HostPort 70000", "70000");
            assertThat(snapshot(lab)).isEqualTo(before);
            stillServes(lab);

            // A second container wants the port the holder has: docker run fails with gatun's words.
            DockerLab.Result second = lab.docker.docker("run", "-d", "--name", "second", "--network", "net1",
                    "-p", "18080:80", DockerLab.IMAGE, "sleep", "3600");
            assertThat(second.code()).as("docker run -p 18080:80 while holder has it; stdout %s", second.out()).isNotZero();
            assertThat(second.err()).as("docker run's stderr names the port and its holder (endpoint %s)", ep)
                    .contains("18080").contains(ep.substring(0, 12));
            assertThat(lab.docker.dockerOk("inspect", "-f", "{{.State.Running}}", "second").out().strip()).isEqualTo("false");
            // Docker undoes the endpoint (Leave, DeleteEndpoint) as part of the failed start.
            assertThat(Probe.poll(Duration.ofSeconds(5), () -> snapshot(lab).equals(before)))
                    .as("nothing changed by the refused docker run: now %s, before %s", snapshot(lab), before).isTrue();
            assertThat(Probe.httpNow(lab.outside, HOST, 18080, "/index.html")).isEqualTo("holder");
            stillServes(lab);

            // And it still does real work.
            lab.docker.dockerOk("rm", "-f", "second");
            lab.docker.dockerOk("run", "-d", "--name", "third", "--network", "net1", "-p", "18082:80",
                    DockerLab.IMAGE, "sh", "-c", web("third"));
            Probe.awaitHttp(lab.outside, HOST, 18082, "/index.html", "third");
        }
    }

    private static void assertRefused(PluginHttp.Response r, String what, String named) {
        assertThat(r.ok()).as("%s: the plugin answered %s", what, r).isFalse();
        assertThat(r.status()).as("%s: status", what).isBetween(400, 599);
        assertThat(r.err()).as("%s: Err of %s", what, r).isNotBlank().containsIgnoringCase(named);
    }

    private static void stillServes(PluginLab lab) {
        PluginHttp.Response activate = PluginHttp.post(lab.socket(), "Plugin.Activate", "");
        assertThat(activate.status()).as("Plugin.Activate: %s", activate).isEqualTo(200);
        assertThat(activate.headers().getOrDefault("content-type", "")).startsWith(PluginHttp.MEDIA_TYPE);
        assertThat(texts(activate.json().get("Implements"))).containsExactly("NetworkDriver");
        PluginHttp.Response caps = PluginHttp.post(lab.socket(), "NetworkDriver.GetCapabilities", "");
        assertThat(caps.status()).as("GetCapabilities: %s", caps).isEqualTo(200);
        assertThat(caps.json().path("Scope").asText()).as("GetCapabilities: %s", caps).isEqualTo("local");
    }

    // ---- coexistence with Docker's own iptables -------------------------------------------

    /**
     * A real host: dockerd with iptables on ({@link DockerLab.Networking#DOCKER_BRIDGE}: FORWARD
     * policy DROP, docker0, docker-proxy) and gatun's network side by side. gatun's published
     * port answers from outside and by hairpin (br_netfilter sends bridged packets through
     * FORWARD too), Docker's own on docker0 from outside, gatun's way through Docker's FORWARD is a
     * rule of its own in DOCKER-USER; and after each of two dockerd restarts (containers with a
     * restart policy come back, through the plugin for gatun's) both answer again within a second
     * of dockerd being ready, with DOCKER-USER as it was.
     *
     */
    @Test
    void withDockersIptablesOnBothPortsAnswerAndAgainWithinASecondOfDockerdRestarting() {
        try (PluginLab lab = PluginLab.start(DockerLab.Networking.DOCKER_BRIDGE)) {
            lab.createNetwork("--subnet", SUBNET, "net1");
            // --init: the shell gets dockerd's SIGTERM (as pid 1 it would ignore it; each stop would take 10 s).
            lab.docker.dockerOk("run", "-d", "--init", "--restart", "always", "--name", "gweb", "--network", "net1",
                    "-p", "18080:80", DockerLab.IMAGE, "sh", "-c", web("gatun-net"));
            lab.docker.dockerOk("run", "-d", "--init", "--restart", "always", "--name", "dweb",
                    "-p", "18090:80", DockerLab.IMAGE, "sh", "-c", web("docker-bridge"));
            Probe.awaitHttp(lab.outside, HOST, 18080, "/index.html", "gatun-net");
            Probe.awaitHttp(lab.outside, HOST, 18090, "/index.html", "docker-bridge");
            assertHairpin(lab);

            List<String> dockerUser = dockerUser(lab);
            assertThat(dockerUser).as("DOCKER-USER: a rule of gatun's before Docker's RETURN").hasSizeGreaterThan(1)
                    .last().isEqualTo("-A DOCKER-USER -j RETURN");
            for (int round = 1; round <= 2; round++) {
                DockerLab.Restart restart = lab.docker.restartDockerd();
                long gatunAnswered = awaitHttpAt(lab, 18080, "gatun-net");
                long dockerAnswered = awaitHttpAt(lab, 18090, "docker-bridge");
                System.out.printf("DockerPluginIT: restart %d: dockerd stopped in %d ms, ready %d ms later; gatun's port"
                                + " answered %d ms after that, Docker's %d ms%n", round, restart.stopTook().toMillis(),
                        restart.startTook().toMillis(), restart.sinceReady(gatunAnswered).toMillis(),
                        restart.sinceReady(dockerAnswered).toMillis());
                assertThat(restart.sinceReady(gatunAnswered)).as("restart %d: gatun's port answering, from dockerd ready", round)
                        .isLessThanOrEqualTo(Duration.ofSeconds(1));
                assertThat(restart.sinceReady(dockerAnswered)).as("restart %d: Docker's port answering, from dockerd ready", round)
                        .isLessThanOrEqualTo(Duration.ofSeconds(1));
                assertThat(dockerUser(lab)).as("restart %d: DOCKER-USER", round).isEqualTo(dockerUser);
                assertHairpin(lab);
            }
        }
    }

    private static void assertHairpin(PluginLab lab) {
        DockerLab.Result hairpin = lab.docker.dockerOk("run", "--rm", "--network", "net1", DockerLab.IMAGE,
                "timeout", "10", "wget", "-qO-", "http://" + HOST + ":18080/index.html");
        assertThat(hairpin.out().strip()).as("hairpin to gatun's port").isEqualTo("gatun-net");
    }

    private static List<String> dockerUser(PluginLab lab) {
        return Oracle.in(lab.host, "iptables", "-w", "-S", "DOCKER-USER").lines().filter(l -> l.startsWith("-A ")).toList();
    }

    /** {@link Probe#awaitHttp} from outside; {@link System#nanoTime()} when it answered. */
    private static long awaitHttpAt(PluginLab lab, int port, String expected) {
        Probe.awaitHttp(lab.outside, HOST, port, "/index.html", expected);
        return System.nanoTime();
    }

    // ---- helpers ------------------------------------------------------------------------

    private static void assertMapping(JsonNode m, JsonNode net, int hostPort, String containerIp, int containerPort) {
        assertThat(m.get("network").asText()).as("network of %s", m).isEqualTo(net.get("name").asText());
        assertThat(m.get("hostIp").isNull()).as("hostIp of %s: all addresses", m).isTrue();
        assertThat(m.get("hostPort").asInt()).as("hostPort of %s", m).isEqualTo(hostPort);
        assertThat(m.get("containerIp").asText()).as("containerIp of %s", m).isEqualTo(containerIp);
        assertThat(m.get("containerPort").asInt()).as("containerPort of %s", m).isEqualTo(containerPort);
    }

    private static Map<String, JsonNode> byProtocol(List<JsonNode> mappings) {
        return mappings.stream().collect(Collectors.toMap(m -> m.get("protocol").asText(), m -> m, (a, b) -> {
            throw new AssertionError("two mappings of one protocol: " + a + " and " + b);
        }, TreeMap::new));
    }

    /** The lab namespace's veths other than the one to outside (gout): one per attached container. */
    private static List<String> veths(PluginLab lab) {
        return Probe.links(lab.host, "veth").stream().filter(n -> !n.equals("gout")).toList();
    }

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array != null) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    private static String randomId() {
        byte[] b = new byte[32];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
