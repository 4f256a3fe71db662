package dev.gatun.cli.serve;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeClient;
import dev.gatun.cli.wire.ServeWire;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The serve's one-shot socket as clients that misbehave use it: calls it cannot read, calls
 * too large, calls not for a serve, a caller that is not root, a call cut off, one that
 * trickles in, one that stalls. Each is refused with its status (the client then runs the call
 * itself) or runs; none runs half, none holds up the next caller, and the serve keeps serving.
 */
@ExtendWith(FreshNamespaces.class)
class OneShotServerIT {

    private static ServeClient.Answer call(Path socket, byte[] request) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            write(c, request);
            return ServeClient.read(Channels.newInputStream(c).readAllBytes());
        }
    }

    private static void write(SocketChannel c, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static int status(ServeClient.Answer a) {
        assertThat(a).as("a refusal: %s", a).isInstanceOf(ServeClient.Answer.Refused.class);
        return ((ServeClient.Answer.Refused) a).status();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void misbehavingCallersAreRefusedOrServedAndNoneHoldsUpTheNext(NetworkNamespace host, NetworkNamespace other)
            throws Exception {
        String ns = host.name();
        try (GatunServe serve = serveWithNetwork(host, "--log-requests")) {
            Path socket = ServeSockets.oneShotOf(host);

            assertThat(status(call(socket, ascii("teapot 3\nabc")))).as("an unknown kind").isEqualTo(400);
            assertThat(status(call(socket, ascii("cli 3x\nabc")))).as("a length that is no number").isEqualTo(400);
            assertThat(status(call(socket, ascii("cli 99999999\n")))).as("over 64 KiB").isEqualTo(413);
            assertThat(status(call(socket, ascii("cli 2\nls")))).as("an argument without its NUL").isEqualTo(400);
            assertThat(status(call(socket, ServeClient.cliRequest(List.of("demo"))))).as("runs where it is typed")
                    .isEqualTo(421);
            assertThat(status(call(socket, ServeClient.cliRequest(List.of("--netns", other.name(), "--json", "ls")))))
                    .as("another namespace").isEqualTo(421);
            assertThat(status(call(socket, ServeClient.cliRequest(List.of("--netns", other.name(), "publish", "n1",
                    "10.88.0.9", "-p", "9999:80"))))).as("another namespace, in a line read without picocli").isEqualTo(421);
            try (SocketChannel cut = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                write(cut, ascii("cli 100\npublish\0"));
                cut.shutdownOutput();
                assertThat(status(ServeClient.read(Channels.newInputStream(cut).readAllBytes()))).as("a call cut off")
                        .isEqualTo(400);
            }

            byte[] publish = ServeClient.cliRequest(List.of("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80"));
            try (SocketChannel stalled = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                write(stalled, ascii("cli 100\npub"));
                ServeClient.Answer meanwhile = call(socket, publish);
                assertThat(meanwhile).as("answered while another caller stalls")
                        .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.code()).as(r.stderr()).isZero());
            }

            // A call whose body comes after its first line, in a second write a moment later, runs.
            byte[] listing = ServeClient.cliRequest(List.of("--netns", ns, "ls"));
            int head = new String(listing, StandardCharsets.ISO_8859_1).indexOf('\n') + 1;
            try (SocketChannel slow = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                write(slow, java.util.Arrays.copyOf(listing, head));
                Thread.sleep(200);
                write(slow, java.util.Arrays.copyOfRange(listing, head, listing.length));
                assertThat(ServeClient.read(Channels.newInputStream(slow).readAllBytes())).as("a call that trickled in")
                        .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.stdout()).contains("*:8080"));
            }

            // A peer that is not root: the socket is 0600 in a 0700 directory, so open both up for
            // this one check of the serve's own credential test. The C client, refused, runs the
            // call itself: here, with no launcher to run, it exits 125 and prints nothing.
            Oracle.run(List.of("chmod", "0755", socket.getParent().toString()));
            Oracle.run(List.of("chmod", "0666", socket.toString()));
            int mark = serve.stderrMark();
            try {
                Oracle.Result nobody = Oracle.run(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "env", "-u", "GATUN_LAUNCHER", Path.of("target/gatun-client").toAbsolutePath().toString(),
                        "--netns", ns, "publish", "n1", "10.88.0.3", "-p", "9090:80"));
                assertThat(nobody.exitCode()).as("the client as nobody: %s", nobody).isEqualTo(125);
                assertThat(nobody.stdout()).isEmpty();
            } finally {
                Oracle.run(List.of("chmod", "0600", socket.toString()));
                Oracle.run(List.of("chmod", "0700", socket.getParent().toString()));
            }
            assertThat(serve.stderr().substring(mark)).contains("403", "root only");

            // Only the one call that ran changed the kernel.
            String map = Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4");
            assertThat(map).contains("8080").doesNotContain("9090");
            assertStillServing(serve, socket, "*:8080");
        }
    }

    /**
     * A client that stops reading its answer (its output piped to a pager that waits, say) holds
     * up no other caller: the answer that did not fit in the socket is written on a thread of its
     * own, whole when the client reads again, and given up after 10 s of nothing taken, said in
     * the serve's log. The answers here (20,000 published ports, then their listing) are far
     * larger than a unix socket's buffer.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void aClientThatStopsReadingItsAnswerHoldsUpNobody(NetworkNamespace host) throws Exception {
        try (GatunServe serve = serveWithNetwork(host)) {
            Path socket = ServeSockets.oneShotOf(host);
            byte[] meanwhile = ServeClient.cliRequest(List.of("publish", "n1", "10.88.0.3", "-p", "8080:80"));
            try (SocketChannel stalled = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                write(stalled, ServeClient.cliRequest(List.of("publish", "n1", "10.88.0.2", "-p", "10000-29999:10000-29999")));
                ServeClient.Answer next;
                try {
                    next = CompletableFuture.supplyAsync(() -> uncheckedCall(socket, meanwhile)).get(30, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError("no answer in 30 s while the caller before reads nothing: the serve waits on it");
                }
                assertThat(next).as("answered while the caller before reads nothing")
                        .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.code()).as(r.stderr()).isZero());
                ServeClient.Answer late = ServeClient.read(Channels.newInputStream(stalled).readAllBytes());
                assertThat(late).as("the stalled caller's whole answer, once it reads")
                        .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> {
                            assertThat(r.code()).as(r.stderr()).isZero();
                            assertThat(r.stdout().lines()).hasSize(20_000).last().asString().contains("*:29999");
                        });
            }

            int mark = serve.stderrMark();
            try (SocketChannel gone = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                write(gone, ServeClient.cliRequest(List.of("ls")));
                assertThat(serve.awaitStderr(mark, "took none of the rest of its answer", Duration.ofSeconds(60)))
                        .as("given up on, and said: %s", serve.stderr().substring(mark)).isTrue();
                assertThat(ServeClient.read(Channels.newInputStream(gone).readAllBytes())).as("cut off")
                        .isInstanceOf(ServeClient.Answer.Broken.class);
            }
            assertStillServing(serve, socket, "*:8080");
        }
    }

    /**
     * A serve out of file descriptors for a while (here: its limit lowered to none, with
     * prlimit) cannot take a call; the caller waits in the socket's queue and is answered once
     * descriptors are back, and the socket stays (without it, the clients would refuse to run
     * their calls beside a live serve until it restarts). Both moments are in the serve's log.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aShortageOfDescriptorsPassesAndTheSocketStays(NetworkNamespace host) throws Exception {
        try (GatunServe serve = serveWithNetwork(host)) {
            Path socket = ServeSockets.oneShotOf(host);
            String pid = Long.toString(serve.pid());
            String limits = ran(List.of("prlimit", "--pid", pid, "--nofile", "--output", "SOFT,HARD", "--noheadings"));
            String[] softHard = limits.split("\\s+");
            int mark = serve.stderrMark();
            // None at all: what it holds stays open, and a descriptor it closes meanwhile leaves no room.
            ran(List.of("prlimit", "--pid", pid, "--nofile=0:" + softHard[1]));
            CompletableFuture<ServeClient.Answer> waiting;
            try {
                waiting = CompletableFuture.supplyAsync(() -> uncheckedCall(socket,
                        ServeClient.cliRequest(List.of("publish", "n1", "10.88.0.2", "-p", "8080:80"))));
                assertThat(serve.awaitStderr(mark, "cannot take a call", Duration.ofSeconds(30)))
                        .as("the shortage, in the serve's log: %s (the caller: %s)", serve.stderr().substring(mark),
                                waiting.handle((a, e) -> e != null ? e.toString() : String.valueOf(a)).getNow("waiting")).isTrue();
                assertThat(waiting).as("the caller waits").isNotDone();
            } finally {
                ran(List.of("prlimit", "--pid", pid, "--nofile=" + softHard[0] + ":" + softHard[1]));
            }
            ServeClient.Answer answered;
            try {
                answered = waiting.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new AssertionError("the caller that waited: " + e + "; the serve's log: " + serve.stderr().substring(mark), e);
            }
            assertThat(answered).as("answered once descriptors are back")
                    .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.code()).as(r.stderr()).isZero());
            assertThat(serve.awaitStderr(mark, "takes calls again", Duration.ofSeconds(10))).isTrue();
            assertThat(socket).as("the socket stays").exists();
            assertStillServing(serve, socket, "*:8080");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains("8080");
        }
    }

    /**
     * Calls that wait hold up no publish. Here two CNI ADDs whose IPAM plugin (a script of the
     * test's) waits until the test lets it go, as an IPAM plugin may wait on its lock or on a
     * DHCP server: while both wait in the serve at the same time, a publish and an unpublish
     * from other callers are answered; then the plugin fails, each ADD is answered with that
     * failure, and the kernel holds what the publish made and nothing of the ADDs'.
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void callsThatWaitHoldUpNoPublish(NetworkNamespace host, NetworkNamespace pod, @TempDir Path dir) throws Exception {
        Path go = dir.resolve("go");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path plugin = bin.resolve("waiting-ipam");
        Files.writeString(plugin, """
                #!/bin/sh
                # An IPAM plugin that says it started, waits until the test lets it go, then fails.
                cat > /dev/null
                touch "%s/started-$CNI_CONTAINERID"
                while [ ! -e "%s" ]; do sleep 0.05; done
                echo '{"cniVersion": "1.0.0", "code": 11, "msg": "let go by the test"}'
                exit 1
                """.formatted(dir, go));
        Files.setPosixFilePermissions(plugin, PosixFilePermissions.fromString("rwx------"));
        String config = """
                {"cniVersion": "1.0.0", "name": "waits", "type": "gatun", "bridge": "cnt-waits",
                 "ipam": {"type": "waiting-ipam"}}""";
        List<String> pods = List.of("pod-a", "pod-b");
        // A platform thread for each caller: the common pool may have a single one on a small
        // machine, and a virtual thread reading here was once seen parked with its answer in the socket.
        try (GatunServe serve = serveWithNetwork(host);
             ExecutorService callers = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().factory())) {
            Path socket = ServeSockets.oneShotOf(host);
            List<CompletableFuture<ServeClient.Answer>> waiting = pods.stream().map(id -> {
                Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", id, "CNI_NETNS",
                        pod.path().toString(), "CNI_IFNAME", "eth0", "CNI_PATH", bin.toString());
                byte[] call = ServeWire.request(ServeWire.Kind.CNI, ServeWire.cniCall(env, config.getBytes(StandardCharsets.UTF_8)));
                return CompletableFuture.supplyAsync(() -> uncheckedCall(socket, call), callers);
            }).toList();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!pods.stream().allMatch(id -> Files.exists(dir.resolve("started-" + id))) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(pods).as("ADDs whose IPAM plugin runs: both at once, each on a thread of its own")
                        .allMatch(id -> Files.exists(dir.resolve("started-" + id)));

                for (List<String> line : List.of(List.of("publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "8081:81"),
                        List.of("unpublish", "n1", "10.88.0.2", "-p", "8081:81"))) {
                    ServeClient.Answer meanwhile;
                    try {
                        meanwhile = CompletableFuture.supplyAsync(() -> uncheckedCall(socket, ServeClient.cliRequest(line)), callers)
                                .get(30, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError(line + ": no answer in 30 s while two CNI ADDs wait: they hold it up");
                    }
                    assertThat(meanwhile).as("%s, answered while two CNI ADDs wait", line)
                            .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.code()).as(r.stderr()).isZero());
                }
                assertThat(waiting).as("the ADDs still wait").noneMatch(CompletableFuture::isDone);
            } finally {
                Files.writeString(go, "");
            }
            for (CompletableFuture<ServeClient.Answer> add : waiting) {
                assertThat(add.get(30, TimeUnit.SECONDS)).as("an ADD that waited, answered once its IPAM plugin failed")
                        .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> {
                            assertThat(r.code()).as("%s", r).isNotZero();
                            assertThat(r.stdout()).contains("let go by the test");
                        });
            }
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains("8080").doesNotContain("8081");
            assertThat(Oracle.in(host, "ip", "-o", "link")).doesNotContain("cnt-waits");
            assertThat(Oracle.in(pod, "ip", "-o", "link")).doesNotContain("eth0");
            assertStillServing(serve, socket, "*:8080");
        }
    }

    /** A serve of {@code host} with network n1 (10.88.0.0/16) made before it starts. */
    private static GatunServe serveWithNetwork(NetworkNamespace host, String... serveOptions) {
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        return GatunServe.start(host.name(), null, serveOptions);
    }

    /** The serve still runs and answers a listing that shows {@code published}. */
    private static void assertStillServing(GatunServe serve, Path socket, String published) throws IOException {
        assertThat(call(socket, ServeClient.cliRequest(List.of("ls")))).as("still serving")
                .isInstanceOfSatisfying(ServeClient.Answer.Ran.class, r -> assertThat(r.stdout()).contains(published));
        assertThat(serve.isAlive()).isTrue();
    }

    private static String ran(List<String> command) {
        Oracle.Result r = Oracle.run(command);
        assertThat(r.exitCode()).as("%s: %s", command, r).isZero();
        return r.stdout().trim();
    }

    private static ServeClient.Answer uncheckedCall(Path socket, byte[] request) {
        try {
            return call(socket, request);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A serve of a version before the calls socket (here a stand-in that only listens on the API
     * socket) still runs for the namespace: the client finds no calls socket and falls back to the
     * JVM path, which must not run the command beside that serve (its repair would undo it) and
     * says what to do instead. Nothing changes in the kernel.
     */
    @Test
    void aServeOfAnOlderVersionIsNeitherCalledNorRunBeside(NetworkNamespace host) throws Exception {
        Path api = ServeSockets.of(host);
        Files.createDirectories(api.getParent(), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        Files.deleteIfExists(api);
        try (ServerSocketChannel older = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            older.bind(UnixDomainSocketAddress.of(api));
            GatunCli.Run r = GatunCli.run("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
            assertThat(r.code()).as("%s", r).isEqualTo(4);
            assertThat(r.err()).contains("older version", api.toString(), "restart");
            assertThat(Oracle.in(host, "nft", "list", "tables")).as("nothing ran").doesNotContain("gatun");
        } finally {
            Files.deleteIfExists(api);
        }
        // The control: without it, the same command runs.
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        assertThat(Oracle.in(host, "nft", "list", "tables")).contains("gatun");
    }
}
