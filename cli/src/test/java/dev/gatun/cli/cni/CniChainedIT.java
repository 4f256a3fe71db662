package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.docker.GatunCli;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun chained in {@code portmap}'s place after Debian's {@code ptp} and {@code bridge}, every
 * CNI version they speak, run as libcni runs a chain ({@link CniExec}): a published port answers
 * on 127.0.0.1 of the host and to the container itself and a sibling through a host address
 * (hairpin), as portmap's own integration suite asks; DEL leaves the host as the main plugin
 * left it (links, routes, every other table, route_localnet). Without a serve; with one:
 * {@link CniChainedServedIT}.
 */
@ExtendWith(FreshNamespaces.class)
class CniChainedIT {

    /** A host address of the test's host namespace, on a veth standing in for a node's uplink (no dummy links here). */
    static final String HOST_IP = "192.0.2.10";
    static final List<String> VERSIONS = List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0");

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
        everyVersion(host, c1, c2, version -> """
                {"cniVersion": "%s", "name": "chp", "type": "ptp", "ipMasq": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.97.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"}}""".formatted(version, dir.resolve("ipam")));
    }

    @Test
    void afterBridgeLocalhostAndHairpinAnswer(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2)
            throws IOException {
        everyVersion(host, c1, c2, version -> """
                {"cniVersion": "%s", "name": "chb", "type": "bridge", "bridge": "cnb1", "isGateway": true,
                 "ipMasq": true, "hairpinMode": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.98.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"}}""".formatted(version, dir.resolve("ipam")));
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
