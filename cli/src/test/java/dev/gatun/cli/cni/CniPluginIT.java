package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CNI plugin run as libcni runs it ({@link CniExec}), every verb, against the real kernel of
 * a fresh host namespace, the reference host-local and bridge plugins, real traffic and nft as
 * the judges. Without a serve here: each call starts a JVM. {@link CniPluginServedIT} runs the
 * same with a serve for the host namespace, through the C client.
 */
@ExtendWith(FreshNamespaces.class)
class CniPluginIT {

    static final String PORTS = "{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"},"
            + "{\"hostPort\": 5353, \"containerPort\": 53, \"protocol\": \"udp\"}";

    @TempDir
    Path dir;

    /** Called with each test's host namespace before any plugin runs (a serve starts here when served). */
    void useHost(NetworkNamespace host) {
    }

    /** Whether a serve puts back what someone else removes of its mappings (so CHECK finds them again). */
    boolean selfHealing() {
        return false;
    }

    CniExec lab(NetworkNamespace host) {
        useHost(host);
        return new CniExec(host, dir);
    }

    static String ruleset(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "ruleset").stdout();
    }

    static String links(NetworkNamespace ns) {
        return Oracle.in(ns, "ip", "-o", "link", "show");
    }

    static String elements(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports4").stdout();
    }

    /** Waits until the serve put back the element {@code key} someone removed from ports4; fails if it does not within 10 s. */
    static void awaitRepaired(NetworkNamespace host, String key) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!elements(host).contains(key) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(elements(host)).as("the serve put back " + key).contains(key);
    }

    /**
     * A deploy script's move on a CNI runtime: the new pod's ADD may not take a held port (the
     * runtime chose it), the script replaces it with the CLI, and the old pod's DEL then leaves
     * the new owner's mapping alone.
     */
    @Test
    void aPortMovedWithReplaceOutlivesTheOldPodsDelAndAnAddStillRefusesAHeldPort(NetworkNamespace host,
                                                                               NetworkNamespace c1,
                                                                               NetworkNamespace c2) {
        CniExec cni = lab(host);
        String withPort = cni.config("1.0.0", "web", "10.88.0.0/24",
                "{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"}");
        cni.call("ADD", "old", c1, "eth0", withPort).ok();
        CniExec.Result refused = cni.call("ADD", "new", c2, "eth0", withPort);
        assertThat(refused.errorCode()).as(refused.stdout()).isEqualTo(101);
        cni.call("DEL", "new", c2, "eth0", withPort).ok();
        JsonNode added = cni.call("ADD", "new", c2, "eth0", cni.config("1.0.0", "web", "10.88.0.0/24", null)).ok().json();
        String newIp = added.path("ips").get(0).path("address").asText().split("/")[0];

        GatunCli.Run moved = GatunCli.ok("--netns", host.name(), "publish", "web", newIp, "-p", "8080:80",
                "--owner", "new/eth0", "--replace");
        assertThat(moved.out()).contains("replaced ").contains("(owner old/eth0)");
        cni.call("DEL", "old", c1, "eth0", withPort).ok();
        assertThat(elements(host)).as("the new owner's mapping after the old pod's DEL")
                .contains("tcp . 8080").contains(newIp);
        cni.call("DEL", "new", c2, "eth0", cni.config("1.0.0", "web", "10.88.0.0/24", null)).ok();
        assertThat(elements(host)).doesNotContain("8080");
    }

    @Test
    void addMakesTheAttachmentAndItsPortsAnswer(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2)
            throws Exception {
        CniExec cni = lab(host);
        String config = cni.config("1.0.0", "web", "10.88.0.0/24", PORTS);
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        assertThat(r.path("cniVersion").asText()).isEqualTo("1.0.0");
        assertThat(r.path("interfaces")).hasSize(3);
        assertThat(r.path("interfaces").get(0).path("name").asText()).isEqualTo("cnt-web");
        assertThat(r.path("interfaces").get(2).path("name").asText()).isEqualTo("eth0");
        assertThat(r.path("interfaces").get(2).path("sandbox").asText()).isEqualTo(c1.path().toString());
        JsonNode ip = r.path("ips").get(0);
        assertThat(ip.path("address").asText()).isEqualTo("10.88.0.2/24");
        assertThat(ip.path("gateway").asText()).isEqualTo("10.88.0.1");
        assertThat(ip.path("interface").asInt()).isEqualTo(2);
        assertThat(ip.has("version")).as("1.0.0 has no ips[].version").isFalse();
        assertThat(Oracle.in(c1, "ip", "-o", "addr", "show", "eth0")).contains("10.88.0.2/24");
        assertThat(Oracle.in(host, "cat", "/sys/class/net/cnt-web/addr_assign_type").strip()).as("the bridge's MAC is fixed")
                .isEqualTo("3");
        assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0\" : 10.88.0.2 . 80")
                .contains("udp . 5353 comment \"c1/eth0\" : 10.88.0.2 . 53");
        assertThat(cni.reservations("web")).containsExactly("10.88.0.2");

        // The published port answers: from the host (output) and hairpin from a sibling on the bridge.
        cni.call("ADD", "c2", c2, "eth0", cni.config("1.0.0", "web", "10.88.0.0/24", null)).ok();
        try (ServerSocketChannel server = Traffic.listen(c1, "0.0.0.0", 80)) {
            for (NetworkNamespace from : List.of(host, c2)) {
                try (SocketChannel client = Traffic.connect(from, "10.88.0.1", 8080);
                     SocketChannel accepted = server.accept()) {
                    Traffic.roundTrip(client, accepted, "through gatun's CNI plugin");
                }
            }
        }
    }

    @Test
    void everyVersionAddsAndDeletes(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = lab(host);
        // host-local 1.1.1 (Debian's) speaks up to 1.0.0; 1.1.0 is tested chained and with GC and STATUS.
        for (String version : List.of("0.3.0", "0.3.1", "0.4.0", "1.0.0")) {
            String config = cni.config(version, "v", "10.89.0.0/24", PORTS);
            JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
            assertThat(r.path("cniVersion").asText()).isEqualTo(version);
            assertThat(r.path("ips").get(0).path("version").asText(null))
                    .isEqualTo(version.equals("1.0.0") ? null : "4");
            assertThat(elements(host)).contains("tcp . 8080");
            cni.call("DEL", "c1", c1, "eth0", CniExec.withPrevResult(config, r)).ok();
            assertThat(elements(host)).doesNotContain("8080");
            assertThat(links(c1)).doesNotContain("eth0");
            assertThat(cni.reservations("v")).isEmpty();
        }
    }

    @Test
    void delRemovesEverythingEvenWithoutPortsOrNetnsAndAgain(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = lab(host);
        String config = cni.config("0.4.0", "d", "10.90.0.0/24", PORTS);
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        String hostEnd = r.path("interfaces").get(1).path("name").asText();
        assertThat(links(host)).contains(hostEnd);
        // The runtime may know neither the ports nor the netns any more.
        String bare = cni.config("0.4.0", "d", "10.90.0.0/24", null);
        CniExec.Result del = cni.call("DEL", "c1", null, "eth0", bare).ok();
        assertThat(del.stdout()).isEmpty();
        assertThat(elements(host)).doesNotContain("8080").doesNotContain("5353");
        assertThat(links(host)).doesNotContain(hostEnd);
        assertThat(cni.reservations("d")).isEmpty();
        cni.call("DEL", "c1", null, "eth0", bare).ok();
        cni.call("DEL", "c1", c1, "eth0", config).ok();
        cni.call("DEL", "never-added", null, "eth0", bare).ok();
    }

    /**
     * The runtime holds a container's host ports itself before ADD (rootful Podman binds each
     * through conmon): a socket of the host on the port does not refuse a CNI publish, as it
     * refuses the CLI's (the control, in the same namespace).
     */
    @Test
    void aHostSocketOnThePortIsTheRuntimesReservation(NetworkNamespace host, NetworkNamespace c1) throws IOException {
        CniExec cni = lab(host);
        try (ServerSocketChannel reservation = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET)
                .bind(new InetSocketAddress(8080)))) {
            cni.call("ADD", "c1", c1, "eth0", cni.config("1.0.0", "r", "10.91.0.0/24", PORTS)).ok();
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0\" : 10.91.0.2 . 80");
            GatunCli.Run cli = GatunCli.run("--netns", host.name(), "publish", "r", "10.91.0.3", "-p", "8081:80");
            assertThat(cli.code()).as(cli.err()).isZero();
            try (ServerSocketChannel other = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET)
                    .bind(new InetSocketAddress(8082)))) {
                GatunCli.Run refused = GatunCli.run("--netns", host.name(), "publish", "r", "10.91.0.3", "-p", "8082:80");
                assertThat(refused.code()).as("the CLI asks the host's sockets").isEqualTo(3);
                assertThat(refused.err()).contains("8082");
            }
        }
    }

    /**
     * The namespace's deletion takes the veth with it, nothing more: the mappings, the address
     * host-local holds and the endpoint's listing are there until gatun's DEL removes them.
     */
    @Test
    void delAfterTheNetnsIsGone(NetworkNamespace host) {
        CniExec cni = lab(host);
        String name = "gatun-test-cni-gone-" + ProcessHandle.current().pid();
        NetworkNamespace gone = NamedNamespaces.create(name);
        String config = cni.config("1.0.0", "g", "10.91.0.0/24", PORTS);
        try {
            cni.call("ADD", "c9", gone, "eth0", config).ok();
        } finally {
            NamedNamespaces.delete(name);
        }
        assertThat(elements(host)).as("the namespace is gone, the DEL has not come")
                .contains("tcp . 8080 comment \"c9/eth0\"").contains("udp . 5353 comment \"c9/eth0\"");
        assertThat(cni.reservations("g")).containsExactly("10.91.0.2");
        assertThat(GatunCli.ok("--netns", host.name(), "ls", "g").out()).contains("c9/eth0");

        cni.call("DEL", "c9", gone, "eth0", config).ok();
        assertThat(elements(host)).doesNotContain("8080").doesNotContain("5353");
        assertThat(cni.reservations("g")).isEmpty();
        assertThat(GatunCli.ok("--netns", host.name(), "ls", "g").out()).doesNotContain("c9/eth0");
    }

    @Test
    void checkNamesWhatIsMissing(NetworkNamespace host, NetworkNamespace c1) throws InterruptedException {
        CniExec cni = lab(host);
        String config = cni.config("1.0.0", "k", "10.92.0.0/24", PORTS);
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        String check = CniExec.withPrevResult(config, r);
        cni.call("CHECK", "c1", c1, "eth0", check).ok();

        Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ udp . 5353 }");
        Oracle.in(c1, "ip", "addr", "del", "10.92.0.2/24", "dev", "eth0");
        if (selfHealing()) {
            // The serve puts the mapping back; CHECK runs after it did, not in a race with it.
            awaitRepaired(host, "udp . 5353");
        }
        CniExec.Result broken = cni.call("CHECK", "c1", c1, "eth0", check);
        assertThat(broken.errorCode()).isEqualTo(CniError.MISSING);
        if (selfHealing()) {
            // The mapping is back; the address the serve does not manage.
            assertThat(broken.json().path("msg").asText()).contains("10.92.0.2").doesNotContain("5353");
        } else {
            assertThat(broken.json().path("msg").asText()).contains("5353").contains("10.92.0.2").doesNotContain("8080");
        }

        Oracle.in(host, "ip", "link", "del", r.path("interfaces").get(1).path("name").asText());
        broken = cni.call("CHECK", "c1", c1, "eth0", check);
        assertThat(broken.errorCode()).isEqualTo(CniError.MISSING);
        assertThat(broken.json().path("msg").asText()).contains("veth");
        cni.call("DEL", "c1", c1, "eth0", check).ok();
    }

    @Test
    void gcRemovesOnlyStaleAttachments(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        CniExec cni = lab(host);
        String config = cni.config("1.0.0", "gc", "10.93.0.0/24", PORTS);
        cni.call("ADD", "keep", c1, "eth0", config).ok();
        String other = cni.config("1.0.0", "gc", "10.93.0.0/24",
                "{\"hostPort\": 9090, \"containerPort\": 90}");
        cni.call("ADD", "stale", c2, "eth0", other).ok();
        // Someone else's mapping on the same network: not the plugin's, never collected.
        GatunCli.ok("--netns", host.name(), "publish", "gc", "10.93.0.200", "-p", "7070:70",
                "--owner", "web-1");
        String gc = CniExec.with(cni.config("1.1.0", "gc", "10.93.0.0/24", null),
                Map.of("cni.dev/valid-attachments", List.of(Map.of("containerID", "keep", "ifname", "eth0"))));
        cni.call("GC", null, null, null, gc).ok();
        assertThat(elements(host)).contains("8080").contains("5353").contains("7070").doesNotContain("9090");
        assertThat(links(c1)).contains("eth0");
        assertThat(links(c2)).doesNotContain("eth0");
        // A second GC finds nothing more.
        cni.call("GC", null, null, null, gc).ok();
        assertThat(elements(host)).contains("8080").contains("7070");
    }

    /**
     * An IPAM plugin made before spec 1.1.0 knows neither STATUS nor GC: gatun asks it VERSION
     * first and skips the verb, saying so; one that speaks 1.1.0 is then asked the verb (the
     * control). Both are scripts of the test's that log each CNI_COMMAND they get.
     */
    @Test
    void statusAndGcAskTheIpamPluginsVersionFirstAndSkipAnOldOne(NetworkNamespace host) throws IOException {
        CniExec cni = lab(host);
        for (String versions : List.of("\"0.3.0\", \"0.3.1\", \"0.4.0\", \"1.0.0\"", "\"1.0.0\", \"1.1.0\"")) {
            boolean old = !versions.contains("1.1.0");
            String type = old ? "old-ipam" : "new-ipam";
            Path log = dir.resolve(type + ".log");
            cni.fakePlugin(type, "echo \"$CNI_COMMAND\" >> " + log + "\n"
                    + "[ \"$CNI_COMMAND\" = VERSION ] && echo '{\"cniVersion\": \"1.0.0\", \"supportedVersions\": [" + versions + "]}'\n"
                    + "exit 0\n");
            String config = CniExec.with(cni.config("1.1.0", "ipv", "10.99.0.0/24", null),
                    Map.of("ipam", Map.of("type", type), "cni.dev/valid-attachments", List.of()));
            CniExec.Result status = cni.call("STATUS", null, null, null, config).ok();
            CniExec.Result gc = cni.call("GC", null, null, null, config).ok();
            if (old) {
                assertThat(Files.readAllLines(log)).containsExactly("VERSION", "VERSION");
                assertThat(status.stderr()).contains("IPAM plugin old-ipam does not speak spec 1.1.0; its STATUS is skipped");
                assertThat(gc.stderr()).contains("IPAM plugin old-ipam does not speak spec 1.1.0; its GC is skipped");
            } else {
                assertThat(Files.readAllLines(log)).containsExactly("VERSION", "STATUS", "VERSION", "GC");
                assertThat(status.stderr() + gc.stderr()).doesNotContain("skipped");
            }
        }
    }

    @Test
    void statusSaysReady(NetworkNamespace host) {
        CniExec cni = lab(host);
        CniExec.Result r = cni.call("STATUS", null, null, null, cni.config("1.1.0", "s", "10.94.0.0/24", null)).ok();
        assertThat(r.stdout()).isEmpty();
    }

    @Test
    void containerdShapedPortMappingsArePublished(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = lab(host);
        String config = cni.config("1.0.0", "cd", "10.95.0.0/24",
                "{\"HostPort\": 8081, \"ContainerPort\": 80, \"Protocol\": \"tcp\", \"HostIP\": \"\"},"
                        + "{\"HostPort\": 0, \"ContainerPort\": 81, \"Protocol\": \"tcp\"},"
                        + "{\"HostPort\": 5354, \"ContainerPort\": 53, \"Protocol\": \"UDP\"}");
        cni.call("ADD", "cd1", c1, "eth0", config).ok();
        assertThat(elements(host)).contains("tcp . 8081").contains("udp . 5354").doesNotContain(". 81 ");
        cni.call("DEL", "cd1", c1, "eth0", config).ok();
        assertThat(elements(host)).doesNotContain("8081");
    }

    @Test
    void chainedAfterTheReferenceBridgeItPublishesOnly(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        CniExec cni = lab(host);
        String bridge = """
                {"cniVersion": "1.0.0", "name": "chain", "type": "bridge", "bridge": "cnb0", "isGateway": true,
                 "ipMasq": true, "hairpinMode": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.96.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}],
                          "dataDir": "%s"}}""".formatted(dir.resolve("ipam"));
        JsonNode prev = cni.exec("bridge", cni.vars("ADD", "ch1", c1, "eth0"), bridge).ok().json();
        String gatun = CniExec.withPrevResult("""
                {"cniVersion": "1.1.0", "name": "chain", "type": "gatun",
                 "runtimeConfig": {"portMappings": [%s]}}""".formatted(PORTS), prev);
        JsonNode r = cni.call("ADD", "ch1", c1, "eth0", gatun).ok().json();
        assertThat(r.path("cniVersion").asText()).isEqualTo("1.1.0");
        assertThat(r.path("ips")).isEqualTo(prev.path("ips"));
        assertThat(links(host)).as("no bridge of gatun's").doesNotContain("gatun-network");
        assertThat(elements(host)).contains("tcp . 8080 comment \"ch1/eth0@chain\" : 10.96.0.2 . 80");
        // Listed by gatun ls too, outside any network of gatun's; not by ls of one network.
        assertThat(GatunCli.ok("--netns", host.name(), "ls").out())
                .containsPattern("(?m)^-\\s+tcp\\s+\\*:8080\\s+10\\.96\\.0\\.2:80\\s+ch1/eth0@chain$");
        JsonNode listed = GatunCli.ok("--netns", host.name(), "--json", "ls").json();
        assertThat(listed.findValuesAsText("owner")).contains("ch1/eth0@chain");
        assertThat(listed.toString()).contains("\"network\":null");
        try (ServerSocketChannel server = Traffic.listen(c1, "0.0.0.0", 80);
             SocketChannel client = Traffic.connect(host, "10.96.0.1", 8080);
             SocketChannel accepted = server.accept()) {
            Traffic.roundTrip(client, accepted, "chained");
        }
        String check = CniExec.withPrevResult(gatun, r);
        cni.call("CHECK", "ch1", c1, "eth0", check).ok();
        Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
        if (selfHealing()) {
            // The serve puts back a mapping published outside its networks too.
            awaitRepaired(host, "tcp . 8080");
        }
        CniExec.Result broken = cni.call("CHECK", "ch1", c1, "eth0", check);
        if (selfHealing()) {
            broken.ok();
        } else {
            assertThat(broken.errorCode()).isEqualTo(CniError.MISSING);
            assertThat(broken.json().path("msg").asText()).contains("8080");
        }

        // GC of another chained network does not touch this one's; of its own, with ch1 gone, it does.
        String gcOther = CniExec.with("{\"cniVersion\": \"1.1.0\", \"name\": \"other\", \"type\": \"gatun\"}",
                Map.of("cni.dev/valid-attachments", List.of()));
        cni.call("GC", null, null, null, gcOther).ok();
        assertThat(elements(host)).contains("5353");
        cni.call("DEL", "ch1", c1, "eth0", check).ok();
        assertThat(elements(host)).doesNotContain("5353");
        cni.exec("bridge", cni.vars("DEL", "ch1", c1, "eth0"), bridge).ok();
        cni.call("DEL", "ch1", c1, "eth0", check).ok();
    }

    @Test
    void badInputFailsWithItsCodeAndChangesNothing(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = lab(host);
        String good = cni.config("1.0.0", "bad", "10.97.0.0/24", PORTS);
        String rulesetBefore = ruleset(host);
        String linksBefore = links(host);
        record Case(String what, Map<String, String> vars, String stdin, int code) {}
        Map<String, String> add = cni.vars("ADD", "b1", c1, "eth0");
        Map<String, String> noNetns = new HashMap<>(add);
        noNetns.remove("CNI_NETNS");
        Map<String, String> badIfname = new HashMap<>(add);
        badIfname.put("CNI_IFNAME", "eth0/evil");
        List<Case> cases = List.of(
                new Case("malformed JSON", add, "{\"cniVersion\": \"1.0.0\", \"name\": ", CniError.DECODE),
                new Case("unknown cniVersion", add, good.replace("\"1.0.0\"", "\"7.0.0\""), CniError.INCOMPATIBLE_VERSION),
                new Case("CNI_NETNS missing", noNetns, good, CniError.BAD_ENVIRONMENT),
                new Case("an invalid CNI_IFNAME", badIfname, good, CniError.BAD_ENVIRONMENT),
                new Case("a port of 70000", add, cni.config("1.0.0", "bad", "10.97.0.0/24",
                        "{\"hostPort\": 70000, \"containerPort\": 80}"), CniError.INVALID_CONFIG));
        for (Case c : cases) {
            CniExec.Result r = cni.exec("gatun", c.vars(), c.stdin());
            assertThat(r.errorCode()).as(c.what() + ": " + r.stdout()).isEqualTo(c.code());
            assertThat(r.json().path("msg").asText()).as(c.what()).isNotBlank();
        }
        assertThat(cni.call("ADD", "b1", c1, "eth0", cni.config("1.0.0", "bad", "10.97.0.0/24",
                "{\"hostPort\": 70000, \"containerPort\": 80}")).json().path("msg").asText()).contains("70000");
        assertThat(ruleset(host)).isEqualTo(rulesetBefore);
        assertThat(links(host)).isEqualTo(linksBefore);
        assertThat(links(c1)).doesNotContain("eth0");
        assertThat(cni.reservations("bad")).isEmpty();
    }

    @Test
    void aHeldPortFailsTheAddAndReleasesItsAddress(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        CniExec cni = lab(host);
        String config = cni.config("1.0.0", "held", "10.98.0.0/24", PORTS);
        cni.call("ADD", "first", c1, "eth0", config).ok();
        CniExec.Result second = cni.call("ADD", "second", c2, "eth0", config);
        assertThat(second.errorCode()).isEqualTo(CniError.CONFLICT);
        assertThat(second.json().path("msg").asText()).contains("8080").contains("first/eth0");
        assertThat(links(c2)).doesNotContain("eth0");
        assertThat(cni.reservations("held")).containsExactly("10.98.0.2");
    }
}
