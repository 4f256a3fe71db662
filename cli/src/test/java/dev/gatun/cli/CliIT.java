package dev.gatun.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.NftJson;
import dev.gatun.testing.Oracle;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.Socket;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

/**
 * The command from outside, exactly as a person or a script runs it: through the real
 * ./gatun launcher, against private namespaces, checking output, JSON and exit codes.
 */
@ExtendWith(FreshNamespaces.class)
class CliIT {

    /** The node's address on the outside namespace's link ({@link PodmanCniIT#outside}). */
    private static final String OUTSIDE_HOST_IP = PodmanCniIT.HOST_IP;

    /** Called with a test's host namespace before its first command: nothing here; {@link CliServedIT} starts a serve. */
    void useHost(NetworkNamespace host) {
    }

    /** The words doctor's serve check must say for {@code host}: here no serve answers. */
    String serveCheckSays(NetworkNamespace host) {
        return "none for network namespace " + host.name() + ": each command starts a JVM";
    }

    @Test
    void doctorSaysWhetherAServeAnswersForTheNamespace(NetworkNamespace host) {
        useHost(host);
        JsonNode checks = GatunCli.ok("--netns", host.name(), "--json", "doctor").json();
        List<JsonNode> serve = new ArrayList<>();
        checks.forEach(c -> {
            if (c.get("check").asText().equals("serve")) {
                serve.add(c);
            }
        });
        assertThat(serve).singleElement().satisfies(c -> {
            assertThat(c.get("ok").asBoolean()).isTrue();
            assertThat(c.get("detail").asText()).contains(serveCheckSays(host));
        });
    }

    @Test
    void networksEndpointsAndPortsWithJson(NetworkNamespace host, NetworkNamespace c1) {
        useHost(host);
        String ns = host.name();
        JsonNode net = GatunCli.ok("--netns", ns, "--json", "net", "create", "n1", "--subnet", "10.88.0.0/16", "--mtu", "1400").json();
        assertThat(net.get("name").asText()).isEqualTo("n1");
        assertThat(net.get("bridge").asText()).isEqualTo("gatun-n1");
        assertThat(net.get("subnets").get(0).asText()).isEqualTo("10.88.0.0/16");
        assertThat(net.get("gateways").get(0).asText()).isEqualTo("10.88.0.1");
        assertThat(net.get("icc").asBoolean()).isTrue();
        assertThat(net.get("internal").asBoolean()).isFalse();
        assertThat(net.get("mtu").asInt()).isEqualTo(1400);
        assertThat(net.get("mac").asText()).matches("[0-9a-f]{2}(:[0-9a-f]{2}){5}");
        assertThat(Oracle.in(host, "cat", "/sys/class/net/gatun-n1/address").strip()).isEqualTo(net.get("mac").asText());

        JsonNode list = GatunCli.ok("--netns", ns, "--json", "net", "ls").json();
        assertThat(list).hasSize(1);
        assertThat(list.get(0)).isEqualTo(net);
        assertThat(GatunCli.ok("--netns", ns, "net", "ls").out()).contains("NAME").contains("gatun-n1").contains("10.88.0.0/16");

        JsonNode ep = GatunCli.ok("--netns", ns, "--json", "attach", "n1", c1.name(), "--owner", "web-1").json();
        assertThat(ep.get("network").asText()).isEqualTo("n1");
        assertThat(ep.get("containerNetns").asText()).isEqualTo(c1.name());
        assertThat(ep.get("ifname").asText()).isEqualTo("eth0");
        assertThat(ep.get("ip").asText()).isEqualTo("10.88.0.2");
        assertThat(ep.get("ip6").isNull()).isTrue();
        assertThat(ep.get("owner").asText()).isEqualTo("web-1");
        assertThat(Oracle.in(host, "ip", "-o", "link", "show", ep.get("hostIfname").asText())).contains("master gatun-n1");

        JsonNode pub = GatunCli.ok("--netns", ns, "--json", "publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "127.0.0.1:5353:53/udp")
                .json();
        assertThat(pub).hasSize(2);
        JsonNode ls = GatunCli.ok("--netns", ns, "--json", "ls").json();
        assertThat(ls).hasSize(2);
        JsonNode tcp = ls.get(0).get("protocol").asText().equals("tcp") ? ls.get(0) : ls.get(1);
        assertThat(tcp.get("network").asText()).isEqualTo("n1");
        assertThat(tcp.get("hostIp").isNull()).isTrue();
        assertThat(tcp.get("hostPort").asInt()).isEqualTo(8080);
        assertThat(tcp.get("containerIp").asText()).isEqualTo("10.88.0.2");
        assertThat(tcp.get("containerPort").asInt()).isEqualTo(80);
        assertThat(tcp.get("owner").asText()).isEqualTo("10.88.0.2");
        assertThat(GatunCli.ok("--netns", ns, "ls", "n1").out()).contains("*:8080").contains("127.0.0.1:5353");

        assertThat(GatunCli.ok("--netns", ns, "--json", "unpublish", "n1", "10.88.0.2").json()).hasSize(2);
        assertThat(GatunCli.ok("--netns", ns, "--json", "ls").json()).isEmpty();
        // Again: nothing left, still exit 0, saying where it looked.
        assertThat(GatunCli.ok("--netns", ns, "unpublish", "n1", "10.88.0.2").out())
                .isEqualTo("nothing to unpublish: owner 10.88.0.2 has no port published to 10.88.0.2 in n1\n");
        GatunCli.ok("--netns", ns, "detach", "n1", c1.name());
        assertThat(Oracle.in(c1, "ip", "-o", "link", "show")).doesNotContain("eth0");
        GatunCli.ok("--netns", ns, "net", "rm", "n1");
        assertThat(GatunCli.ok("--netns", ns, "--json", "net", "ls").json()).isEmpty();
    }

    /** Datagrams from the host (to its gateway address, which the output dnat takes), counted per port. */
    @Test
    void portCountersOfANetworkMadeWithThem(NetworkNamespace host, NetworkNamespace c1) throws IOException {
        useHost(host);
        String ns = host.name();
        assertThat(GatunCli.ok("--netns", ns, "--json", "net", "create", "n1", "--subnet", "10.88.0.0/16", "--counters")
                .json().get("counters").asBoolean()).isTrue();
        assertThat(GatunCli.ok("--netns", ns, "net", "ls").out().lines())
                .anyMatch(l -> l.startsWith("n1 ") && l.matches(".*\\syes\\s*"));
        GatunCli.ok("--netns", ns, "attach", "n1", c1.name());
        GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80/udp", "-p", "8081:81/udp");
        try (ReplyServers servers = new ReplyServers().udp(c1, "10.88.0.2", 80, "a");
             DatagramChannel client = ReplyServers.udpClient(host)) {
            for (int i = 0; i < 50; i++) {
                assertThat(ReplyServers.udpAsk(client, "10.88.0.1", 8080)).as("answer %d", i).isEqualTo("a");
            }
        }
        JsonNode stats = GatunCli.ok("--netns", ns, "--json", "ls", "--stats", "n1").json();
        assertThat(stats).hasSize(2);
        // 50 datagrams of 20 bytes of IPv4 header, 8 of UDP and 4 of payload.
        assertThat(stats.get(0).get("hostPort").asInt()).isEqualTo(8080);
        assertThat(stats.get(0).get("packets").asLong()).isEqualTo(50);
        assertThat(stats.get(0).get("bytes").asLong()).isEqualTo(50 * 32);
        assertThat(stats.get(1).get("packets").asLong()).isZero();
        assertThat(GatunCli.ok("--netns", ns, "ls", "--stats").out().lines())
                .anyMatch(l -> l.contains("*:8080") && l.matches(".*\\s50\\s+1600\\s*"));
        assertThat(GatunCli.ok("--netns", ns, "--json", "ls", "n1").json().get(0).has("packets"))
                .as("counts only when asked").isFalse();
        expectError(2, "nftables", GatunCli.run("--netns", ns, "--driver", "iptables-nft", "net", "create", "n2",
                "--subnet", "10.89.0.0/16", "--counters"));
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gatun-n2");
    }

    @Test
    void badInputAndConflictsHaveTheirExitCodesAndChangeNothing(NetworkNamespace host) {
        useHost(host);
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "alice");
        String before = Oracle.in(host, "nft", "list", "ruleset");

        // Every line is checked, also after one fails: one wrong exit code does not hide the others.
        // BadInputTest has more of the first kind, without root: this runs them through the launcher.
        assertSoftly(soft -> {
            expectError(soft, 2, "8080::80:x", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080::80:x"));
            expectError(soft, 2, "70000", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "70000:80"));
            expectError(soft, 2, "::1", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "[::1]:8081:80"));
            expectError(soft, 2, "nosuchnet", GatunCli.run("--netns", ns, "publish", "nosuchnet", "10.88.0.2", "-p", "8081:80"));
            expectError(soft, 2, "gatun-no-such-ns", GatunCli.run("--netns", "gatun-no-such-ns", "net", "ls"));
            expectError(soft, 2, "gatun-no-such-ns", GatunCli.run("--netns", ns, "attach", "n1", "gatun-no-such-ns"));
            expectError(soft, 3, "alice", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "8080:80",
                    "--owner", "bob"));
            expectError(soft, 3, "n1", GatunCli.run("--netns", ns, "net", "create", "n1", "--subnet", "10.77.0.0/16"));

            GatunCli.Run json = GatunCli.run("--netns", ns, "--json", "publish", "n1", "10.88.0.3", "-p", "8080:80",
                    "--owner", "bob");
            soft.assertThat(json.code()).isEqualTo(3);
            soft.assertThat(json.json().get("error").get("code").asInt()).isEqualTo(3);
            soft.assertThat(json.json().get("error").get("message").asText()).contains("alice");
            GatunCli.Run usage = GatunCli.run("--json", "publish", "n1");
            soft.assertThat(usage.code()).isEqualTo(2);
            soft.assertThat(usage.json().get("error").get("code").asInt()).isEqualTo(2);
        });

        assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);
    }

    /**
     * A port that a process of the host listens on (busybox's nc on [::], which takes IPv4 too):
     * exit 3 naming the port and the process, nothing changed; --skip-host-port-check publishes
     * anyway; and doctor reports a listener that came after its port was published.
     */
    @Test
    void aPortAProcessOfTheHostListensOnIsAConflictNamingIt(NetworkNamespace host) throws Exception {
        useHost(host);
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        String before = Oracle.in(host, "nft", "list", "ruleset");
        Process nc = listen(host, 8080);
        try {
            GatunCli.Run refused = GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80");
            expectError(3, "*:8080/tcp", refused);
            assertThat(refused.err()).contains("busybox (pid " + nc.pid() + ") listens on [::]:8080/tcp");
            GatunCli.Run json = GatunCli.run("--netns", ns, "--json", "publish", "n1", "10.88.0.2", "-p", "8080:80");
            assertThat(json.json().get("error").get("code").asInt()).isEqualTo(3);
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);

            GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "--skip-host-port-check");
            GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "9090:90");
        } finally {
            nc.destroy();
            Bounded.waitFor(nc, Duration.ofSeconds(30), "nc, after SIGTERM");
        }
        Process later = listen(host, 9090);
        try {
            JsonNode checks = GatunCli.ok("--netns", ns, "--json", "doctor").json();
            List<String> inUse = new ArrayList<>();
            for (JsonNode c : checks) {
                if (c.get("check").asText().equals("host port in use")) {
                    assertThat(c.get("ok").asBoolean()).isFalse();
                    inUse.add(c.get("detail").asText());
                }
            }
            assertThat(inUse).singleElement().asString().contains("*:9090/tcp").contains("busybox (pid " + later.pid() + ")");
        } finally {
            later.destroy();
            later.waitFor();
        }
    }

    @Test
    void replaceMovesAPortBetweenOwnersAndDrainWaitsForItsConnections(NetworkNamespace host, NetworkNamespace c1,
                                                                     NetworkNamespace c2, NetworkNamespace out)
            throws Exception {
        PodmanCniIT.outside(host, out);
        useHost(host);
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        GatunCli.ok("--netns", ns, "attach", "n1", c1.name(), "--owner", "web-1");
        GatunCli.ok("--netns", ns, "attach", "n1", c2.name(), "--owner", "web-2");
        try (ReplyServers servers = new ReplyServers()) {
            servers.tcp(c2, "10.88.0.3", 80, "web-2");
            Process held = listen(c1, 80);
            try {
                GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "web-1");
                expectError(3, "web-1", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "8080:80",
                        "--owner", "web-2"));
                expectError(2, "--replace", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "8080:80",
                        "--owner", "web-2", "--keep-udp-flows"));
                expectError(2, "10.88.0.99", GatunCli.run("--netns", ns, "publish", "n1", "10.88.0.99", "-p", "8080:80",
                        "--owner", "web-9", "--replace"));
                try (Socket old = out.call(() -> new Socket(OUTSIDE_HOST_IP, 8080))) {
                    GatunCli.Run moved = GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "8080:80",
                            "--owner", "web-2", "--replace");
                    assertThat(moved.out().lines().toList()).hasSize(2);
                    assertThat(moved.out().lines().findFirst().orElseThrow()).startsWith("replaced ")
                            .contains("10.88.0.2:80").contains("(owner web-1)");
                    assertThat(moved.out()).contains("published ").contains("10.88.0.3:80/tcp (owner web-2)");
                    assertThat(ReplyServers.tcpFetch(out, OUTSIDE_HOST_IP, 8080)).as("a new connection")
                            .isEqualTo("web-2");

                    JsonNode back = GatunCli.ok("--netns", ns, "--json", "publish", "n1", "10.88.0.2", "-p", "8080:80",
                            "--owner", "web-1", "--replace").json();
                    assertThat(back.get("replaced").get(0).get("owner").asText()).isEqualTo("web-2");
                    assertThat(back.get("published").get(0).get("containerIp").asText()).isEqualTo("10.88.0.2");

                    GatunCli.Run timedOut = GatunCli.ok("--netns", ns, "unpublish", "n1", "10.88.0.2", "--owner", "web-1",
                            "--drain", "--timeout", "1");
                    assertThat(timedOut.out()).contains("unpublished ").contains("timeout after 1 s: 1 established "
                            + "connection through them remain");
                    assertThat(GatunCli.ok("--netns", ns, "--json", "ls").json()).isEmpty();
                    old.getOutputStream().write("still here\n".getBytes(StandardCharsets.UTF_8));
                }
                assertThat(held.getInputStream().readNBytes(11)).as("the old container still got the old connection's data")
                        .isEqualTo("still here\n".getBytes(StandardCharsets.UTF_8));
                GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.3", "-p", "8080:80", "--owner", "web-2");
                JsonNode drained = GatunCli.ok("--netns", ns, "--json", "unpublish", "n1", "10.88.0.3", "--owner", "web-2",
                        "--drain", "--timeout", "10").json();
                assertThat(drained.get("remaining").asInt()).isZero();
                assertThat(drained.get("unpublished")).hasSize(1);
                expectError(2, "--timeout", GatunCli.run("--netns", ns, "unpublish", "n1", "10.88.0.3", "--drain",
                        "--timeout", "0"));
            } finally {
                held.destroy();
            }
        }
    }

    /** busybox nc listening on [::]:port inside the namespace, once ss (the oracle) shows it listening. */
    private static Process listen(NetworkNamespace ns, int port) throws Exception {
        Process p = new ProcessBuilder("nsenter", "--net=" + ns.path(), "busybox", "nc", "-l", "-p", Integer.toString(port))
                .redirectErrorStream(true).start();
        for (int i = 0; i < 1000; i++) {
            if (Oracle.in(ns, "ss", "-Htln", "sport = :" + port).contains(":" + port)) {
                return p;
            }
            Thread.sleep(10);
        }
        p.destroy();
        throw new AssertionError("nc never listened on port " + port);
    }

    private static void expectError(int code, String named, GatunCli.Run r) {
        assertSoftly(soft -> expectError(soft, code, named, r));
    }

    private static void expectError(SoftAssertions soft, int code, String named, GatunCli.Run r) {
        soft.assertThat(r.code()).as("exit code; stderr: %s", r.err()).isEqualTo(code);
        soft.assertThat(r.err()).startsWith("gatun: ").contains(named);
        soft.assertThat(r.out()).isEmpty();
    }

    @Test
    void rulesetOutputAppliesToTheSameRuleset(NetworkNamespace host, NetworkNamespace fresh) throws IOException {
        useHost(host);
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16", "--subnet", "fd00:88::/64");
        GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "192.0.2.7:53:53/udp");
        GatunCli.ok("--netns", ns, "publish", "n1", "fd00:88::2", "-p", "[::]:8443:443");
        String text = GatunCli.ok("--netns", ns, "ruleset").out();
        assertThat(text).startsWith("table inet gatun {");

        Path file = Files.createTempFile("gatun-ruleset", ".nft");
        try {
            Files.writeString(file, text);
            Oracle.in(fresh, "nft", "-f", file.toString());
        } finally {
            Files.delete(file);
        }
        assertThat(NftJson.ruleset(fresh)).isEqualTo(NftJson.ruleset(host));
    }

    @Test
    void netnsCommandsManageNamedNamespaces() {
        String name = FreshNamespaces.PREFIX + "cli-" + ProcessHandle.current().pid();
        try {
            GatunCli.ok("netns", "add", name);
            assertThat(Oracle.host("ip", "netns", "list")).contains(name);
            JsonNode ls = GatunCli.ok("--json", "netns", "ls").json();
            assertThat(ls.toString()).contains(name);
            expectError(3, name, GatunCli.run("netns", "add", name));
            GatunCli.ok("netns", "del", name);
            assertThat(Oracle.host("ip", "netns", "list")).doesNotContain(name);
            expectError(2, name, GatunCli.run("netns", "del", name));
            expectError(2, "a/b", GatunCli.run("netns", "add", "a/b"));
        } finally {
            if (NamedNamespaces.exists(name)) {
                NamedNamespaces.delete(name);
            }
        }
    }

    @Test
    void doctorListsEveryForeignDropWithWhatGatunDidAboutIt(NetworkNamespace host) {
        useHost(host);
        // A host as ufw and a hand-written nftables firewall leave it.
        Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
        Oracle.in(host, "nft", "add table inet fw");
        Oracle.in(host, "nft", "add chain inet fw forward { type filter hook forward priority 0; policy drop; }");
        Oracle.in(host, "nft", "add chain inet fw input { type filter hook input priority 0; policy drop; }");
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");

        JsonNode checks = GatunCli.ok("--netns", host.name(), "--json", "doctor").json();
        List<JsonNode> drops = new ArrayList<>();
        checks.forEach(c -> {
            if (c.get("check").asText().equals("foreign drop")) {
                drops.add(c);
            }
        });
        assertThat(drops).extracting(d -> d.get("firewall").asText() + " " + d.get("where").asText())
                .containsExactlyInAnyOrder("iptables-legacy filter FORWARD", "nftables inet fw forward");
        for (JsonNode d : drops) {
            if (d.get("firewall").asText().equals("nftables")) {
                assertThat(d.get("ok").asBoolean()).as("gatun cannot open another table itself").isFalse();
                assertThat(d.get("why").asText()).isEqualTo("policy drop");
                assertThat(d.get("action").asText())
                        .endsWith("add: nft insert rule inet fw forward meta mark & 0x00002000 == 0x00002000 accept");
            } else {
                assertThat(d.get("ok").asBoolean()).as(d.get("detail").asText()).isTrue();
                assertThat(d.get("why").asText()).isEqualTo("policy DROP");
            }
        }
        assertThat(GatunCli.ok("--netns", host.name(), "doctor").out()).contains("nftables inet fw forward (policy drop)");

        GatunCli.ok("--netns", host.name(), "net", "rm", "n1");
        assertThat(Oracle.in(host, "iptables-legacy-save")).doesNotContain("GATUN");
    }

    @Test
    void doctorReportsChecksAsJson(NetworkNamespace host) {
        useHost(host);
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        JsonNode checks = GatunCli.ok("--netns", host.name(), "--json", "doctor").json();
        assertThat(checks.isArray()).isTrue();
        List<String> names = new ArrayList<>();
        for (JsonNode c : checks) {
            assertThat(c.has("check") && c.has("ok") && c.has("detail")).isTrue();
            names.add(c.get("check").asText());
        }
        assertThat(names).contains("privileges", "libmnl.so.0", "libnftnl.so.11", "nf_tables", "iptables",
                "bridge gatun-n1");
        for (JsonNode c : checks) {
            if (c.get("check").asText().equals("bridge gatun-n1")) {
                assertThat(c.get("ok").asBoolean()).isTrue();
                assertThat(c.get("detail").asText()).contains("addr_assign_type 3");
            }
        }
    }

    /**
     * The bridge's route_localnet is on for gatun's sake: doctor says that gatun's drop guards it,
     * and says it no longer does when someone takes the drop away, until a repair puts it back.
     */
    @Test
    void doctorSaysWhatGuardsEachInterfaceThatRoutesLoopback(NetworkNamespace host) throws InterruptedException {
        useHost(host);
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        assertThat(localnet(host)).isEqualTo("true on for gatun network n1; gatun's drop of 127.0.0.0/8 from anywhere but"
                + " lo guards it");
        assertThat(GatunCli.ok("--netns", host.name(), "doctor").out()).containsPattern("route_localnet gatun-n1 +ok ");

        Oracle.in(host, "nft", "flush", "chain", "inet", "gatun", "prerouting-raw");
        if (!heals()) {
            assertThat(localnet(host)).startsWith("false on for gatun network n1; gatun's drop is NOT in place");
            return;
        }
        // A serve puts the drop back with the rest of its table, within about a second.
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!localnet(host).startsWith("true ") && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(localnet(host)).as("the serve's repair").startsWith("true on for gatun network n1");
    }

    /** Whether a serve runs for each test's namespace, healing its table. */
    boolean heals() {
        return false;
    }

    /** The doctor's route_localnet check of gatun-n1, as "OK DETAIL". */
    private static String localnet(NetworkNamespace host) {
        JsonNode checks = GatunCli.ok("--netns", host.name(), "--json", "doctor").json();
        for (JsonNode c : checks) {
            if (c.get("check").asText().equals("route_localnet gatun-n1")) {
                return c.get("ok").asBoolean() + " " + c.get("detail").asText();
            }
        }
        throw new AssertionError("no route_localnet check of gatun-n1 in " + checks);
    }

    @Test
    void everyCommandHasHelpWithExamples() {
        for (String[] cmd : List.of(new String[] {"--help"}, new String[] {"demo", "--help"},
                new String[] {"doctor", "--help"}, new String[] {"netns", "--help"}, new String[] {"net", "create", "--help"},
                new String[] {"net", "rm", "--help"}, new String[] {"attach", "--help"}, new String[] {"detach", "--help"},
                new String[] {"publish", "--help"}, new String[] {"unpublish", "--help"}, new String[] {"ls", "--help"},
                new String[] {"ruleset", "--help"}, new String[] {"cni", "--help"}, new String[] {"cni", "install", "--help"})) {
            GatunCli.Run r = GatunCli.ok(cmd);
            assertThat(r.out()).as(String.join(" ", cmd)).contains("Usage:").contains("Examples:");
        }
    }

    @Test
    void aStartWithUpToDateSourcesDoesNotBuild() {
        GatunCli.ok("--version");
        GatunCli.Run again = GatunCli.ok("--version");
        assertThat(again.err()).doesNotContain("building");
        assertThat(again.out()).startsWith("gatun");
    }

    @Test
    void demoPassesAndLeavesNothingBehind() {
        String namespacesBefore = Oracle.host("ip", "netns", "list");
        GatunCli.Run r = GatunCli.ok("demo");
        assertThat(r.out()).contains("PASS").doesNotContain("FAIL").contains("demo passed").contains("addr_assign_type 3");
        assertThat(Oracle.host("ip", "netns", "list")).isEqualTo(namespacesBefore);
    }
}
