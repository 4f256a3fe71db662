package dev.gatun.cli.wire;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The one-shot protocol has one definition ({@link ServeWire}) and two Java users of it, but the
 * client users run is C: here the C client, built from this checkout, talks to a stand-in serve
 * on its namespace's socket, which keeps the request's bytes and answers with bytes of the
 * test's choosing. Its request must be the one ServeWire writes, and it must read every answer
 * as ServeWire reads it: what ran (printed and exit code), refused, or broken.
 */
@ExtendWith(FreshNamespaces.class)
class ServeWireIT {

    private static Path client;

    @TempDir
    static Path build;

    private Path socket;

    @BeforeAll
    static void buildTheClient() {
        client = build.resolve("gatun-client");
        Oracle.Result r = Oracle.run(List.of("gcc", "-O2", "-Wall", "-o", client.toString(), "src/main/c/gatun-client.c"));
        assertThat(r.exitCode()).as("gcc: %s", r.stderr()).isZero();
    }

    @AfterEach
    void removeTheSocket() throws IOException {
        if (socket != null) {
            Files.deleteIfExists(socket);
        }
    }

    /** What the C client sent, and how it ended. */
    private record Exchange(byte[] request, int exitCode, String stdout, String stderr) {}

    /** Runs the client ({@code command}, {@code env} added, {@code stdin}) against a stand-in serve answering {@code reply}. */
    private Exchange exchange(NetworkNamespace host, List<String> command, Map<String, String> env, byte[] stdin,
                              byte[] reply) throws Exception {
        return exchange(host, command, env, stdin, reply, Duration.ZERO);
    }

    /** The same, the stand-in answering {@code after} it read the request. */
    private Exchange exchange(NetworkNamespace host, List<String> command, Map<String, String> env, byte[] stdin,
                              byte[] reply, Duration after) throws Exception {
        return exchange(host, reply, after, () -> {
            ProcessBuilder pb = new ProcessBuilder(command);
            pb.environment().remove("GATUN_LAUNCHER"); // on its own, a fallback is exit 125, not another process
            pb.environment().keySet().removeIf(k -> k.startsWith("CNI_"));
            pb.environment().putAll(env);
            Process p = pb.start();
            p.getOutputStream().write(stdin);
            p.getOutputStream().close();
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> drain(p, true));
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> drain(p, false));
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the client finished").isTrue();
            return new Ran(p.exitValue(), new String(out.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8),
                    new String(err.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
        });
    }

    /** How a client's run ended. */
    private record Ran(int exitCode, String stdout, String stderr) {}

    /** Runs {@code client} against a stand-in serve on {@code host}'s calls socket that answers {@code reply} {@code after} it read the request. */
    private Exchange exchange(NetworkNamespace host, byte[] reply, Duration after, Callable<Ran> client) throws Exception {
        socket = ServeSockets.oneShotOf(host);
        Files.createDirectories(socket.getParent(), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        // A serve killed by an earlier test may have left this path (namespace inodes are reused): a serve
        // starting removes such a file too.
        Files.deleteIfExists(socket);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<byte[]> request = CompletableFuture.supplyAsync(() -> serveOnce(server, reply, after));
            Ran ran = client.call();
            return new Exchange(request.get(30, TimeUnit.SECONDS), ran.exitCode(), ran.stdout(), ran.stderr());
        } finally {
            Files.deleteIfExists(socket); // a closed server's file stays: the next bind needs it gone
        }
    }

    /** The JVM path's forwarding ({@link ServeClient#forward}, in this JVM) of {@code args} against the stand-in. */
    private Exchange exchangeInThisJvm(NetworkNamespace host, List<String> args, byte[] reply, Duration after)
            throws Exception {
        return exchange(host, reply, after, () -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            OptionalInt code = ServeClient.forward(args.toArray(String[]::new), out, err);
            assertThat(code).as("forwarded").isPresent();
            return new Ran(code.getAsInt(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        });
    }

    private static byte[] drain(Process p, boolean stdout) {
        try {
            return (stdout ? p.getInputStream() : p.getErrorStream()).readAllBytes();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Takes one connection: reads the request whole (its first line, then the bytes it counts),
     * waits {@code after}, answers, closes.
     */
    private static byte[] serveOnce(ServerSocketChannel server, byte[] reply, Duration after) {
        try (SocketChannel c = server.accept()) {
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            while (!whole(got.toByteArray())) {
                buf.clear();
                if (c.read(buf) < 0) {
                    break;
                }
                got.write(buf.array(), 0, buf.position());
            }
            Thread.sleep(after);
            ByteBuffer out = ByteBuffer.wrap(reply);
            while (out.hasRemaining()) {
                c.write(out);
            }
            return got.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static boolean whole(byte[] request) {
        int newline = bodyFrom(request) - 1;
        if (newline < 0) {
            return false;
        }
        String[] head = new String(request, 0, newline, StandardCharsets.US_ASCII).split(" ");
        return request.length - newline - 1 >= Integer.parseInt(head[1]);
    }

    /** Where the body starts: after the first newline (0 when there is none yet). */
    private static int bodyFrom(byte[] request) {
        for (int i = 0; i < request.length; i++) {
            if (request[i] == '\n') {
                return i + 1;
            }
        }
        return 0;
    }

    /** An answer as a serve writes it: 200, the exit code and both lengths, then stdout and stderr. */
    private static byte[] ran(int code, String stdout, String stderr) {
        byte[] out = stdout.getBytes(StandardCharsets.UTF_8);
        byte[] err = stderr.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(("200 " + code + " " + out.length + " " + err.length + "\n").getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(out);
        all.writeBytes(err);
        byte[] answer = all.toByteArray();
        assertThat(answer).as("what a serve writes").isEqualTo(ServeWire.answer(new ServeWire.Printed(code, out, err)));
        return answer;
    }

    @Test
    void aCommandLineIsTheRequestServeWireWritesAndTheAnswerIsReadAsItReadsIt(NetworkNamespace host) throws Exception {
        List<String> args = List.of("--netns", host.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "wéb 1");
        List<String> command = new ArrayList<>(List.of(client.toString()));
        command.addAll(args);
        byte[] reply = ran(3, "printed on stdout\n", "gatun: port 8080 is held by web-2\n");

        Exchange e = exchange(host, command, Map.of(), new byte[0], reply);

        assertThat(e.request()).isEqualTo(ServeWire.request(ServeWire.Kind.CLI, ServeWire.commandLine(args)));
        assertThat(new String(e.request(), StandardCharsets.ISO_8859_1)).startsWith("cli " + (e.request().length - bodyFrom(e.request())) + "\n");
        assertThat(e.request()).as("what ServeClient sends for the same line").isEqualTo(ServeClient.cliRequest(args));
        ServeWire.Printed read = ((ServeWire.Reply.Ran) ServeWire.reply(reply)).printed();
        assertThat(e.exitCode()).isEqualTo(read.code()).isEqualTo(3);
        assertThat(e.stdout()).isEqualTo(new String(read.stdout(), StandardCharsets.UTF_8)).isEqualTo("printed on stdout\n");
        assertThat(e.stderr()).isEqualTo(new String(read.stderr(), StandardCharsets.UTF_8))
                .isEqualTo("gatun: port 8080 is held by web-2\n");
    }

    /**
     * A serve that does not answer for 10 s (stopped, stuck, or only slow) is said once on
     * stderr, naming its pid and socket, and the client waits on and prints the answer when it
     * comes; an unpublish that drains waits by asking and is said nothing of.
     */
    @Test
    void aServeSlowToAnswerIsSaidOnceAndWaitedFor(NetworkNamespace host) throws Exception {
        byte[] reply = ran(0, "published *:8080 -> 10.88.0.2:80/tcp\n", "");
        Exchange slow = exchange(host, List.of(client.toString(), "--netns", host.name(), "publish", "n1", "10.88.0.2",
                "-p", "8080:80"), Map.of(), new byte[0], reply, Duration.ofSeconds(12));
        assertThat(slow.exitCode()).as("%s", slow).isZero();
        assertThat(slow.stdout()).isEqualTo("published *:8080 -> 10.88.0.2:80/tcp\n");
        assertThat(slow.stderr()).as("said once").containsOnlyOnce("has not answered for 10 s")
                .contains("pid " + ProcessHandle.current().pid(), ServeSockets.oneShotOf(host).toString(), "still waiting");

        Exchange drain = exchange(host, List.of(client.toString(), "--netns", host.name(), "unpublish", "n1", "10.88.0.2",
                "--drain"), Map.of(), new byte[0], ran(0, "", ""), Duration.ofSeconds(12));
        assertThat(drain.exitCode()).as("%s", drain).isZero();
        assertThat(drain.stderr()).isEmpty();
    }

    /** The JVM path (no C client built) says it the same way, without the pid the JDK does not give. */
    @Test
    void theJvmPathSaysASlowServeOnceToo(NetworkNamespace host) throws Exception {
        byte[] reply = ran(0, "published *:8080 -> 10.88.0.2:80/tcp\n", "");
        Exchange slow = exchangeInThisJvm(host, List.of("--netns", host.name(), "publish", "n1", "10.88.0.2", "-p",
                "8080:80"), reply, Duration.ofSeconds(12));
        assertThat(slow.exitCode()).as("%s", slow).isZero();
        assertThat(slow.stdout()).isEqualTo("published *:8080 -> 10.88.0.2:80/tcp\n");
        assertThat(slow.stderr()).as("said once").containsOnlyOnce("has not answered for 10 s")
                .contains(ServeSockets.oneShotOf(host).toString(), "still waiting");

        Exchange drain = exchangeInThisJvm(host, List.of("--netns", host.name(), "unpublish", "n1", "10.88.0.2",
                "--drain"), ran(0, "", ""), Duration.ofSeconds(12));
        assertThat(drain.exitCode()).as("%s", drain).isZero();
        assertThat(drain.stderr()).isEmpty();
    }

    @Test
    void aCniCallIsItsVariablesThenTheConfig(NetworkNamespace host) throws Exception {
        byte[] config = "{\"cniVersion\": \"1.1.0\", \"name\": \"n1\", \"type\": \"gatun\"}".getBytes(StandardCharsets.UTF_8);
        Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c-1", "CNI_IFNAME", "eth0",
                "CNI_NETNS", "/run/netns/x", "CNI_PATH", "/opt/cni/bin");
        List<String> command = List.of("ip", "netns", "exec", host.name(), client.toString());

        Exchange e = exchange(host, command, env, config, ran(0, "{\"cniVersion\": \"1.1.0\"}\n", ""));

        String text = new String(e.request(), StandardCharsets.ISO_8859_1);
        int body = bodyFrom(e.request());
        assertThat(text).startsWith("cni " + (e.request().length - body) + "\n");
        ServeWire.CniCall call = ServeWire.cniCall(Arrays.copyOfRange(e.request(), body, e.request().length));
        assertThat(call.env()).isEqualTo(env);
        assertThat(call.config()).isEqualTo(config);
        // The order of the variables is the environment's; with ServeWire's order the request is the same length.
        assertThat(e.request().length - body).isEqualTo(ServeWire.cniCall(env, config).length);
        assertThat(e.exitCode()).isZero();
        assertThat(e.stdout()).isEqualTo("{\"cniVersion\": \"1.1.0\"}\n");
    }

    @Test
    void aNetavarkCallIsItsArgumentsThenStdin(NetworkNamespace host) throws Exception {
        byte[] stdin = "{\"container_id\": \"c-1\", \"network\": {\"name\": \"web\"}}".getBytes(StandardCharsets.UTF_8);
        List<String> args = List.of("setup", "/run/netns/netns-1234");
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", host.name(), client.toString(), "netavark"));
        command.addAll(args);

        Exchange e = exchange(host, command, Map.of(), stdin, ran(0, "{\"interfaces\": {}}\n", ""));

        assertThat(e.request()).isEqualTo(ServeWire.request(ServeWire.Kind.NETAVARK, ServeWire.netavarkCall(args, stdin)));
        int body = bodyFrom(e.request());
        ServeWire.NetavarkCall call = ServeWire.netavarkCall(Arrays.copyOfRange(e.request(), body, e.request().length));
        assertThat(call.args()).isEqualTo(args);
        assertThat(call.stdin()).isEqualTo(stdin);
        assertThat(e.exitCode()).isZero();
        assertThat(e.stdout()).isEqualTo("{\"interfaces\": {}}\n");
    }

    @Test
    void aRefusalAndABrokenAnswerAreTheSameToBothReaders(NetworkNamespace host) throws Exception {
        List<String> command = List.of(client.toString(), "--netns", host.name(), "ls");
        byte[] refused = ServeWire.refusal(421, "network namespace x is not this one");
        assertThat(new String(refused, StandardCharsets.UTF_8)).as("the wire as ServeWire's comment gives it")
                .isEqualTo("421 0 0 49\ngatun serve: network namespace x is not this one\n");
        assertThat(ServeWire.reply(refused)).isEqualTo(new ServeWire.Reply.Refused(421,
                "gatun serve: network namespace x is not this one\n"));
        Exchange r = exchange(host, command, Map.of(), new byte[0], refused);
        assertThat(r.exitCode()).as("refused: run it yourself (exit 125 with no launcher to run)").isEqualTo(125);
        assertThat(r.stdout()).isEmpty();

        byte[] whole = ran(0, "a whole listing\n", "");
        byte[] cut = Arrays.copyOf(whole, whole.length - 5);
        assertThat(ServeWire.reply(cut)).isInstanceOf(ServeWire.Reply.Broken.class);
        Exchange b = exchange(host, command, Map.of(), new byte[0], cut);
        assertThat(b.exitCode()).as("broken: it may have run, so it is not run again").isEqualTo(1);
        assertThat(b.stderr()).contains("stopped answering");
    }
}
