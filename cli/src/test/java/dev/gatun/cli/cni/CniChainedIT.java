package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.CraftedFrames;
import dev.gatun.testing.CraftedFrames.Wire;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Traffic;
import dev.gatun.testing.UdpInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun chained in {@code portmap}'s place after Debian's {@code ptp} and {@code bridge}, every
 * CNI version they speak, run as libcni runs a chain ({@link CniExec}): a published port answers
 * on 127.0.0.1 of the host and to the container itself and a sibling through a host address
 * (hairpin), as portmap's own integration suite asks; DEL leaves the host as the main plugin
 * left it (links, routes, every other table, route_localnet). The route_localnet gatun turns on
 * for a chained container is no door: crafted frames to 127.0.0.1, from the container or the LAN,
 * get nowhere (one CNI version: the guard is the host's, not the plugin's). Without a serve; with
 * one: {@link CniChainedServedIT}.
 */
@ExtendWith(FreshNamespaces.class)
class CniChainedIT {

    /** A host address of the test's host namespace, on a veth standing in for a node's uplink (no dummy links here). */
    static final String HOST_IP = "192.0.2.10";
    static final List<String> VERSIONS = List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0");
    private static final InetAddress LOCALHOST = InetAddress.ofLiteral("127.0.0.1");
    /** The LAN's and the host's ends of the veth {@link Lab#connectOutside} makes. */
    private static final InetAddress OUTSIDE = InetAddress.ofLiteral("192.0.2.2");
    private static final InetAddress LAN_HOST = InetAddress.ofLiteral(Lab.HOST_ADDRESS);
    /** How long a refused frame is given to arrive after its control has. */
    private static final Duration GRACE = Duration.ofMillis(500);
    private static final Duration ARRIVES = Duration.ofSeconds(3);

    @TempDir
    Path dir;

    /** Called with each test's host namespace before any plugin runs (a serve starts here when served). */
    void useHost(NetworkNamespace host) {
    }

    CniExec lab(NetworkNamespace host) {
        useHost(host);
        return new CniExec(host, dir);
    }

    /**
     * Chained mappings are on no network of gatun's: {@code gatun ls} lists them with network
     * {@code -}, {@code gatun ls NET} of a network of gatun's does not, though it lists that
     * network's own (a main-plugin attachment beside the chain).
     */
    @Test
    void lsOfANetworkLeavesChainedMappingsOut(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2)
            throws IOException {
        CniExec cni = lab(host);
        cni.call("ADD", "m1", c2, "eth0", cni.config("1.0.0", "own", "10.106.0.0/24",
                "{\"hostPort\": 9090, \"containerPort\": 90}")).ok();
        String bridge = """
                {"cniVersion": "1.0.0", "name": "chl", "type": "bridge", "bridge": "cnb3", "isGateway": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.107.0.0/24"}]], "dataDir": "%s"}}"""
                .formatted(dir.resolve("ipam"));
        JsonNode prev = cni.exec("bridge", cni.vars("ADD", "ch1", c1, "eth0"), bridge).ok().json();
        cni.call("ADD", "ch1", c1, "eth0", CniExec.withPrevResult(gatunConfig("1.0.0", bridge,
                "{\"hostPort\": 8080, \"containerPort\": 80}"), prev)).ok();

        String all = GatunCli.ok("--netns", host.name(), "ls").out();
        assertThat(all).containsPattern("(?m)^-\\s+tcp\\s+\\*:8080\\s+10\\.107\\.0\\.2:80\\s+ch1/eth0@chl$")
                .containsPattern("(?m)^own\\s+tcp\\s+\\*:9090\\s+10\\.106\\.0\\.2:90\\s+m1/eth0$");
        String own = GatunCli.ok("--netns", host.name(), "ls", "own").out();
        assertThat(own).contains("m1/eth0").doesNotContain("8080").doesNotContain("ch1/eth0@chl");
        JsonNode ownJson = GatunCli.ok("--netns", host.name(), "--json", "ls", "own").json();
        assertThat(ownJson.findValuesAsText("owner")).containsExactly("m1/eth0");
    }

    @Test
    void afterPtpLocalhostAndHairpinAnswer(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2)
            throws IOException {
        everyVersion(host, c1, c2, this::ptp);
    }

    @Test
    void afterBridgeLocalhostAndHairpinAnswer(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2)
            throws IOException {
        everyVersion(host, c1, c2, this::bridge);
    }

    @Test
    void afterPtpNoFrameTo127001GetsInFromTheContainerOrTheLan(NetworkNamespace host, NetworkNamespace outside,
                                                              NetworkNamespace c1) throws Exception {
        attackLoopback(host, outside, c1, ptp("1.0.0"));
    }

    @Test
    void afterBridgeNoFrameTo127001GetsInFromTheContainerOrTheLan(NetworkNamespace host, NetworkNamespace outside,
                                                                 NetworkNamespace c1) throws Exception {
        attackLoopback(host, outside, c1, bridge("1.0.0"));
    }

    private String ptp(String version) {
        return """
                {"cniVersion": "%s", "name": "chp", "type": "ptp", "ipMasq": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.97.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"}}""".formatted(version, dir.resolve("ipam"));
    }

    private String bridge(String version) {
        return """
                {"cniVersion": "%s", "name": "chb", "type": "bridge", "bridge": "cnb1", "isGateway": true,
                 "ipMasq": true, "hairpinMode": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.98.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"}}""".formatted(version, dir.resolve("ipam"));
    }

    /**
     * A container {@code c1} of the chain after {@code mainConfig}, its UDP port 53 published on
     * 127.0.0.1:5353 only and on *:5354, attacked with crafted frames as core's
     * AttackerTrafficSuite sends them: from the container to its gateway's MAC for a service of
     * the host bound to 127.0.0.1, and from the LAN to the host's MAC for the port published on
     * 127.0.0.1. Each refused frame has a control made the same way, which arrives.
     */
    private void attackLoopback(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                String mainConfig) throws Exception {
        CniExec cni = lab(host);
        Lab.connectOutside(host, outside); // also brings the host's lo up: 127.0.0.1 is local only then
        String type = CniExec.JSON.readTree(mainConfig).path("type").asText();
        JsonNode prev = cni.exec(type, cni.vars("ADD", "a1", c1, "eth0"), mainConfig).ok().json();
        JsonNode ip = prev.path("ips").get(0);
        InetAddress container = InetAddress.ofLiteral(ip.path("address").asText().replaceAll("/.*", ""));
        InetAddress gateway = InetAddress.ofLiteral(ip.path("gateway").asText());
        // Both plugins list the host's side first: ptp the veth's host end, bridge the bridge.
        String gatewayIfname = prev.path("interfaces").get(0).path("name").asText();
        Sysctls sysctls = new Sysctls(host);
        assertThat(sysctls.read("ipv4/conf/" + gatewayIfname + "/route_localnet")).as(type + " leaves it off")
                .isEqualTo("0");

        cni.call("ADD", "a1", c1, "eth0", CniExec.withPrevResult(gatunConfig("1.0.0", mainConfig,
                "{\"hostPort\": 5353, \"containerPort\": 53, \"protocol\": \"udp\", \"hostIP\": \"127.0.0.1\"},"
                        + "{\"hostPort\": 5354, \"containerPort\": 53, \"protocol\": \"udp\"}"), prev)).ok();
        assertThat(sysctls.read("ipv4/conf/" + gatewayIfname + "/route_localnet"))
                .as("the door this guards: gatun routes 127.0.0.0/8 on " + gatewayIfname + " for the mapping")
                .isEqualTo("1");
        try (UdpInbox inContainer = UdpInbox.bind(c1, container.getHostAddress(), 53);
             UdpInbox loopbackOnly = UdpInbox.bind(host, "127.0.0.1", 9999);
             UdpInbox onTheGateway = UdpInbox.bind(host, gateway.getHostAddress(), 9998)) {
            Wire toGateway = Wire.to(c1, "eth0", host, gatewayIfname);
            Wire lan = Wire.to(outside, "eth0", host, "gout");

            CraftedFrames.udp(toGateway, container, 40001, gateway, 9998, "control from the container");
            CraftedFrames.udp(toGateway, container, 40002, LOCALHOST, 9999, "to the host's 127.0.0.1");
            CraftedFrames.udp(lan, OUTSIDE, 40003, LAN_HOST, 5354, "control from the LAN");
            CraftedFrames.udp(lan, OUTSIDE, 40004, LOCALHOST, 5353, "to 127.0.0.1 from the LAN");

            assertThat(onTheGateway.got("control from the container", ARRIVES))
                    .as("control: the same frame to the address of " + gatewayIfname).isTrue();
            assertThat(inContainer.got("control from the LAN", ARRIVES))
                    .as("control: the same frame to a port on every address").isTrue();
            assertThat(loopbackOnly.got("to the host's 127.0.0.1", GRACE))
                    .as(type + ": a service of the host bound to 127.0.0.1, from the container").isFalse();
            assertThat(inContainer.got("to 127.0.0.1 from the LAN", GRACE))
                    .as(type + ": a port published on 127.0.0.1 only, from the LAN").isFalse();
        }
    }

    interface MainConfig {
        String of(String version);
    }

    private void everyVersion(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2, MainConfig main)
            throws IOException {
        CniExec cni = lab(host);
        Oracle.batch(host, "link add up0 type veth peer name up0p\naddr add " + HOST_IP + "/24 dev up0\nlink set up0 up\n"
                + "link set up0p up\nlink set lo up\n");
        for (String version : VERSIONS) {
            String mainConfig = main.of(version);
            String type = CniExec.JSON.readTree(mainConfig).path("type").asText();
            JsonNode prev1 = cni.exec(type, cni.vars("ADD", "a1", c1, "eth0"), mainConfig).ok().json();
            JsonNode prev2 = cni.exec(type, cni.vars("ADD", "a2", c2, "eth0"), mainConfig).ok().json();
            String ip1 = prev1.path("ips").get(0).path("address").asText().replaceAll("/.*", "");
            String before = hostState(host);

            String gatun1 = CniExec.withPrevResult(gatunConfig(version, mainConfig,
                    "{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"}"), prev1);
            String gatun2 = CniExec.withPrevResult(gatunConfig(version, mainConfig, ""), prev2);
            JsonNode r1 = cni.call("ADD", "a1", c1, "eth0", gatun1).ok().json();
            assertThat(r1.path("ips")).as(version).isEqualTo(prev1.path("ips"));
            JsonNode r2 = cni.call("ADD", "a2", c2, "eth0", gatun2).ok().json();

            try (ServerSocketChannel server = Traffic.listen(c1, "0.0.0.0", 80)) {
                answers(server, host, "127.0.0.1", "localhost from the host, " + version);
                answers(server, host, HOST_IP, "the host address from the host, " + version);
                answers(server, c1, HOST_IP, "hairpin from the container itself, " + version);
                answers(server, c2, HOST_IP, "hairpin from a sibling, " + version);
            }
            assertThat(Oracle.in(c1, "ip", "-4", "-o", "addr")).contains(ip1);

            cni.call("DEL", "a2", c2, "eth0", CniExec.withPrevResult(gatun2, r2)).ok();
            cni.call("DEL", "a1", c1, "eth0", CniExec.withPrevResult(gatun1, r1)).ok();
            assertThat(hostState(host)).as("DEL of " + version + " leaves the host as the main plugin left it")
                    .isEqualTo(before);
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "outside4"))
                    .as(version).doesNotContain("elements");
            cni.exec(type, cni.vars("DEL", "a2", c2, "eth0"), CniExec.withPrevResult(mainConfig, prev2)).ok();
            cni.exec(type, cni.vars("DEL", "a1", c1, "eth0"), CniExec.withPrevResult(mainConfig, prev1)).ok();
        }
    }

    /** gatun's entry of the chain after {@code mainConfig}: the network's name and version, these port mappings. */
    private static String gatunConfig(String version, String mainConfig, String ports) throws IOException {
        String name = CniExec.JSON.readTree(mainConfig).path("name").asText();
        return """
                {"cniVersion": "%s", "name": "%s", "type": "gatun", "capabilities": {"portMappings": true},
                 "runtimeConfig": {"portMappings": [%s]}}""".formatted(version, name, ports);
    }

    private static void answers(ServerSocketChannel server, NetworkNamespace from, String address, String what)
            throws IOException {
        try (SocketChannel client = connect(from, address, what);
             SocketChannel accepted = server.accept()) {
            Traffic.roundTrip(client, accepted, what);
        }
    }

    private static SocketChannel connect(NetworkNamespace from, String address, String what) {
        try {
            return Traffic.connect(from, address, 8080);
        } catch (RuntimeException e) {
            throw new AssertionError(what + ": " + address + ":8080 did not answer", e);
        }
    }

    /** Without IPv6 link-local lines: the kernel adds and settles those by itself (DAD) while the test runs. */
    private static String withoutLinkLocal(String lines) {
        return lines.replaceAll("(?m)^.*fe80::.*\n", "");
    }

    /**
     * What a chained plugin's DEL must leave as it found it: links, addresses, routes, every
     * table but gatun's own (without counters), and route_localnet of every interface.
     */
    static String hostState(NetworkNamespace host) {
        String ruleset = Oracle.in(host, "nft", "-s", "list", "ruleset").replaceAll("(?ms)^table inet gatun \\{.*?^\\}\\n", "");
        return "== links\n" + Oracle.in(host, "ip", "-o", "link", "show").replaceAll("\\\\ .*", "")
                + "== addresses\n" + withoutLinkLocal(Oracle.in(host, "ip", "-o", "addr", "show"))
                + "== routes\n" + withoutLinkLocal(Oracle.in(host, "ip", "route", "show", "table", "all"))
                + "== other tables\n" + ruleset
                + "== route_localnet\n" + Oracle.in(host, "sh", "-c", "grep . /proc/sys/net/ipv4/conf/*/route_localnet");
    }
}
