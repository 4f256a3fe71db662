package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The codes of cli/README.md's CNI error table that need a real situation to happen: each made
 * to happen (a broken IPAM plugin, a missing capability, a serve killed mid-call, the kernel
 * refusing a route), and the spec's error document {cniVersion, code, msg} read on stdout with
 * exit code 1. Codes 1, 4, 6, 7, 101 and 103 are in {@link CniPluginIT}.
 */
@ExtendWith(FreshNamespaces.class)
class CniErrorCodesIT {

    /** setpriv's way to run the plugin as root without CAP_NET_ADMIN (gone from the bounding set, so after exec too). */
    static final List<String> WITHOUT_NET_ADMIN = List.of("setpriv", "--bounding-set=-net_admin", "--");

    @TempDir
    Path dir;

    /** Asserts the spec's error document with {@code code} and exit code 1; returns its msg. */
    static String error(CniExec.Result r, String version, int code) {
        assertThat(r.code()).as("exit code; stdout: %s, stderr: %s", r.stdout(), r.stderr()).isEqualTo(1);
        JsonNode doc = r.json();
        assertThat(doc.path("code").asInt(-1)).as(r.stdout()).isEqualTo(code);
        assertThat(doc.path("cniVersion").asText()).as(r.stdout()).isEqualTo(version);
        assertThat(doc.path("msg").asText()).as(r.stdout()).isNotBlank();
        return doc.path("msg").asText();
    }

    /** Code 5: the IPAM plugin is there but cannot be run (its interpreter does not exist). */
    @Test
    void anIpamPluginThatCannotRunIs5(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        CniExec cni = new CniExec(host, dir);
        Path broken = cni.bin.resolve("broken-ipam");
        Files.writeString(broken, "#!/nonexistent/interpreter\n");
        broken.toFile().setExecutable(true);
        String config = CniExec.with(cni.config("1.0.0", "e5", "10.120.0.0/24", null),
                Map.of("ipam", Map.of("type", "broken-ipam")));
        String msg = error(cni.call("ADD", "c1", c1, "eth0", config), "1.0.0", CniError.IO_FAILURE);
        assertThat(msg).contains("broken-ipam");
        assertThat(CniPluginIT.links(c1)).doesNotContain("eth0");
    }

    /** Code 102: ADD by root without CAP_NET_ADMIN; nothing stays, the address is given back. */
    @Test
    void addWithoutNetAdminIs102(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = new CniExec(host, dir);
        String config = cni.config("1.0.0", "e102", "10.121.0.0/24", CniPluginIT.PORTS);
        String rulesetBefore = CniPluginIT.ruleset(host);
        CniExec.Result r = cni.exec(WITHOUT_NET_ADMIN, "gatun", cni.vars("ADD", "c1", c1, "eth0"), config);
        String msg = error(r, "1.0.0", CniError.ENVIRONMENT);
        assertThat(msg).containsIgnoringCase("CAP_NET_ADMIN");
        assertThat(CniPluginIT.links(c1)).doesNotContain("eth0");
        assertThat(CniPluginIT.ruleset(host)).isEqualTo(rulesetBefore);
        assertThat(cni.reservations("e102")).isEmpty();
        // The control: the same call with the capability succeeds.
        cni.call("ADD", "c1", c1, "eth0", config).ok();
        cni.call("DEL", "c1", c1, "eth0", config).ok();
    }

    /** Code 50: STATUS by root without CAP_NET_ADMIN; with it, STATUS succeeds. */
    @Test
    void statusWithoutNetAdminIs50(NetworkNamespace host) {
        CniExec cni = new CniExec(host, dir);
        String config = cni.config("1.1.0", "e50", "10.122.0.0/24", null);
        CniExec.Result r = cni.exec(WITHOUT_NET_ADMIN, "gatun", cni.vars("STATUS", null, null, null), config);
        assertThat(error(r, "1.1.0", CniError.NOT_AVAILABLE)).contains("cannot program networks");
        cni.call("STATUS", null, null, null, config).ok();
    }

    /**
     * Code 100: the kernel refuses the container's default route, since the container already
     * has one (an interface of another network, made here by hand); gatun's ADD undoes itself.
     */
    @Test
    void aRouteTheKernelRefusesIs100(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = new CniExec(host, dir);
        Oracle.in(c1, "ip", "link", "add", "other0", "type", "veth", "peer", "name", "other1"); // no dummy module here
        Oracle.in(c1, "ip", "addr", "add", "10.250.0.2/24", "dev", "other0");
        Oracle.in(c1, "ip", "link", "set", "other0", "up");
        Oracle.in(c1, "ip", "route", "add", "default", "via", "10.250.0.1");
        String config = cni.config("1.0.0", "e100", "10.123.0.0/24", CniPluginIT.PORTS);
        String msg = error(cni.call("ADD", "c1", c1, "eth0", config), "1.0.0", CniError.FAILED);
        assertThat(msg).contains("add default route via 10.123.0.1").contains("EEXIST");
        assertThat(CniPluginIT.links(c1)).doesNotContain("eth0");
        assertThat(cni.reservations("e100")).isEmpty();
    }

    /**
     * Code 11: the serve is killed while it runs the call (its IPAM plugin, a script of the
     * test's, says it started and waits); the C client then says "try again".
     */
    @Test
    void aServeKilledDuringTheCallIs11(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        CniExec cni = new CniExec(host, dir);
        Path pid = dir.resolve("ipam.pid");
        cni.fakePlugin("slow-ipam", "echo $$ > " + pid + ".tmp && mv " + pid + ".tmp " + pid + "\nexec sleep 60\n");
        String config = CniExec.with(cni.config("1.0.0", "e11", "10.124.0.0/24", null),
                Map.of("ipam", Map.of("type", "slow-ipam")));
        GatunServe serve = GatunServe.start(host.name(), null, "--log-requests");
        Path socket = Path.of("/run/gatun/netns-" + host.inode() + ".sock");
        try {
            CompletableFuture<CniExec.Result> add = CompletableFuture.supplyAsync(
                    () -> cni.call("ADD", "c1", c1, "eth0", config));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.exists(pid) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(pid).as("the serve ran the IPAM plugin").exists();
            serve.kill();
            String msg = error(add.get(60, TimeUnit.SECONDS), "1.1.0", CniError.TRY_AGAIN);
            assertThat(msg).contains("stopped answering").contains("try again");
        } finally {
            serve.close();
            // SIGKILL leaves the socket files: a later namespace with this inode would find them.
            Files.deleteIfExists(socket);
            Files.deleteIfExists(Path.of("/run/gatun/netns-" + host.inode() + ".calls.sock"));
            if (Files.exists(pid)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }
}
