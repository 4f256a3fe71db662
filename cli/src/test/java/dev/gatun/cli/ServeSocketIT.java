package dev.gatun.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What cli/README.md says of a running serve's local API and its driver: the socket is root's
 * alone and there is no internet socket (unless {@code --metrics}, and then one on the loopback
 * address named), a command asking for another driver is not sent to it, and a serve with an
 * iptables driver says that it does not heal, and does not.
 */
@ExtendWith(FreshNamespaces.class)
class ServeSocketIT {

    /** How long a serve with the nftables driver may take to put a deleted mapping back (README: within a second). */
    private static final Duration REPAIR = Duration.ofSeconds(5);
    private static final String METRICS = "127.0.0.1:19465";

    @Test
    void theApiSocketIsRootsAloneAndTheServeHasNoInternetSocket(NetworkNamespace host) throws Exception {
        try (GatunServe serve = GatunServe.start(host.name())) {
            Path socket = ServeSockets.of(host);
            PosixFileAttributes dir = Files.readAttributes(socket.getParent(), PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            assertThat(socket.getParent()).isEqualTo(Path.of("/run/gatun"));
            assertThat(dir.isDirectory()).isTrue();
            assertThat(PosixFilePermissions.toString(dir.permissions())).as("mode of /run/gatun").isEqualTo("rwx------");
            assertThat(dir.owner().getName()).isEqualTo("root");
            PosixFileAttributes sock = Files.readAttributes(socket, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            assertThat(sock.isOther()).as("%s is a socket", socket).isTrue();
            assertThat(PosixFilePermissions.toString(sock.permissions())).as("mode of %s", socket).isEqualTo("rw-------");
            assertThat(sock.owner().getName()).isEqualTo("root");
            Path calls = ServeSockets.oneShotOf(host);
            PosixFileAttributes callsSock = Files.readAttributes(calls, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            assertThat(calls.getParent()).isEqualTo(socket.getParent());
            assertThat(callsSock.isOther()).as("%s is a socket", calls).isTrue();
            assertThat(PosixFilePermissions.toString(callsSock.permissions())).as("mode of %s", calls).isEqualTo("rw-------");
            assertThat(callsSock.owner().getName()).isEqualTo("root");

            // The control: root gets an answer. A peer that is not root does not get as far as the serve.
            Oracle.Result root = curl(socket, List.of());
            assertThat(root.stdout()).as(root.stderr()).endsWith("\n200");
            Oracle.Result nobody = curl(socket, List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
            assertThat(nobody.exitCode()).as("curl as nobody: %s", nobody).isNotZero();
            assertThat(nobody.stdout()).as("no answer for nobody").doesNotContain("200");

            // Its sockets, wherever its threads made them: the namespace it runs in and the one it serves.
            assertThat(internetSockets(serve, null)).as("TCP and UDP sockets of the serve in its own namespace").isEmpty();
            assertThat(internetSockets(serve, host)).as("TCP and UDP sockets of the serve in %s", host.name()).isEmpty();
        }
    }

    /** The positive control of the check above: with --metrics it finds the one listener, on the address named. */
    @Test
    void withMetricsTheServeListensOnTheNamedLoopbackAddressOnly(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "set", "lo", "up");
        try (GatunServe serve = GatunServe.startWith(List.of("ip", "netns", "exec", host.name()),
                List.of("serve", "--metrics", METRICS), null)) {
            assertThat(serve.readyLine()).contains("metrics on http://" + METRICS + "/metrics");
            List<String> sockets = internetSockets(serve, host);
            assertThat(sockets).as("TCP and UDP sockets of the serve").singleElement().asString()
                    .startsWith("tcp").contains("LISTEN")
                    // Java's dual-stack socket bound to 127.0.0.1 shows as the IPv4-mapped address: still loopback only.
                    .containsPattern(" (127\\.0\\.0\\.1|\\[::ffff:127\\.0\\.0\\.1\\]):" + METRICS.split(":")[1] + " ");
        }
    }

    /**
     * A command line with {@code --driver} naming another driver than the serve's runs in a JVM
     * of its own: the serve's log has no line of it, and it works. The same with the serve's
     * own driver named is served (the control).
     */
    @Test
    void aCommandAskingForAnotherDriverIsNotSentToTheServe(NetworkNamespace host) throws Exception {
        String ns = host.name();
        try (GatunServe serve = GatunServe.start(ns, null, "--log-requests")) {
            GatunCli.ok("--netns", ns, "--driver", "nftables", "net", "ls");
            assertThat(serve.awaitStderr(0, "ran gatun --netns " + ns + " --driver nftables net ls: exit 0", Duration.ofSeconds(10)))
                    .as("the serve ran the command naming its own driver; its log: %s", serve.stderr()).isTrue();

            GatunCli.ok("--netns", ns, "--driver", "iptables-nft", "net", "create", "n1", "--subnet", "10.88.0.0/16");
            assertThat(Oracle.in(host, "iptables-nft-save", "-t", "nat")).as("made by the iptables-nft driver")
                    .contains(":GATUN-DNAT");
            assertThat(Oracle.in(host, "ip", "-o", "link", "show", "gatun-n1")).contains("gatun-n1");
            JsonNode nets = GatunCli.ok("--netns", ns, "--driver", "iptables-nft", "--json", "net", "ls").json();
            assertThat(nets).extracting(n -> n.get("name").asText()).containsExactly("n1");
            GatunCli.ok("--netns", ns, "--driver", "iptables-nft", "net", "rm", "n1");
            assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gatun-n1");

            // The serve logs a command before it answers: once this later control's line is in, the others would be too.
            int mark = serve.stderrMark();
            GatunCli.ok("--netns", ns, "--driver", "nftables", "net", "ls");
            assertThat(serve.awaitStderr(mark, "ran gatun --netns " + ns + " --driver nftables net ls: exit 0",
                    Duration.ofSeconds(10))).isTrue();
            assertThat(serve.stderr().lines().filter(l -> l.contains("ran gatun ")).toList())
                    .as("the serve's log").hasSize(2).noneMatch(l -> l.contains("iptables-nft"));
        }
    }

    /**
     * cli/README.md: "Self-healing needs the nftables driver; with an iptables driver serve runs
     * without it and says so." The mapping deleted outside stays deleted for longer than an
     * nftables serve takes to put the same deletion back (the control).
     */
    @Test
    void aServeWithAnIptablesDriverSaysItDoesNotHealAndDoesNot(NetworkNamespace host, NetworkNamespace other)
            throws Exception {
        String ns = host.name();
        try (GatunServe serve = GatunServe.startWith(List.of(), List.of("--netns", ns, "--driver", "iptables-nft", "serve"), null)) {
            assertThat(serve.stderr()).contains("driver iptables-nft: running without self-healing, which needs the nftables driver");
            assertThat(serve.readyLine()).contains("(driver iptables-nft)");
            GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
            GatunCli.ok("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80");
            assertThat(Oracle.in(host, "iptables-nft-save", "-t", "nat")).contains("--dport 8080");
            Oracle.in(host, "iptables-nft", "-w", "-t", "nat", "-F", "GATUN-DNAT");
            assertThat(holds(REPAIR, () -> !Oracle.in(host, "iptables-nft-save", "-t", "nat").contains("--dport 8080")))
                    .as("the deleted mapping stayed deleted; the serve: %s", serve.stderr()).isTrue();
            assertThat(serve.stderr()).doesNotContain("repaired");
        }
        // The control: an nftables serve puts a mapping deleted so back within that time.
        try (GatunServe serve = GatunServe.start(other.name())) {
            assertThat(serve.stderr()).doesNotContain("without self-healing");
            GatunCli.ok("--netns", other.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
            GatunCli.ok("--netns", other.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80");
            Oracle.in(other, "nft", "flush", "map", "inet", "gatun", "ports4");
            assertThat(Bounded.eventually(REPAIR, () -> Oracle.in(other, "nft", "list", "map", "inet", "gatun", "ports4").contains("8080")))
                    .as("the nftables serve put the mapping back; the serve: %s", serve.stderr()).isTrue();
        }
    }

    private static Oracle.Result curl(Path socket, List<String> as) {
        List<String> cmd = new java.util.ArrayList<>(as);
        cmd.addAll(List.of("curl", "-sS", "--max-time", "10", "--unix-socket", socket.toString(), "-w", "\n%{http_code}",
                "http://localhost/v1/networks"));
        return Oracle.run(cmd);
    }

    /**
     * The TCP and UDP sockets (any state) of the serve's process and its children in {@code ns}
     * (null: the namespace this test runs in), as {@code ss -tuanp} lists them.
     */
    private static List<String> internetSockets(GatunServe serve, NetworkNamespace ns) {
        List<String> pids = Stream.concat(Stream.of(serve.pid()), ProcessHandle.of(serve.pid()).stream()
                .flatMap(ProcessHandle::descendants).map(ProcessHandle::pid)).map(p -> "pid=" + p + ",").toList();
        String[] ss = {"ss", "-Htuanp"};
        String out = ns == null ? Oracle.host(ss) : Oracle.in(ns, ss);
        return out.lines().filter(l -> pids.stream().anyMatch(l::contains)).toList();
    }

    /** Whether {@code condition} held at every look, every 50 ms, for all of {@code during}. */
    private static boolean holds(Duration during, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + during.toNanos();
        do {
            if (!condition.getAsBoolean()) {
                return false;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return true;
    }
}
