package dev.gatun.cli.api;

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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
        socket = ServeSockets.of(host);
        Files.createDirectories(socket.getParent(), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        // A serve killed by an earlier test may have left this path (namespace inodes are reused): a serve
        // starting removes such a file too.
        Files.deleteIfExists(socket);
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<byte[]> request = CompletableFuture.supplyAsync(() -> serveOnce(server, reply));
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
            return new Exchange(request.get(30, TimeUnit.SECONDS), p.exitValue(),
                    new String(out.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8),
                    new String(err.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(socket); // a closed server's file stays: the next bind needs it gone
        }
    }

    private static byte[] drain(Process p, boolean stdout) {
        try {
            return (stdout ? p.getInputStream() : p.getErrorStream()).readAllBytes();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Takes one connection: reads the request whole (its head, then Content-Length bytes), answers, closes. */
    private static byte[] serveOnce(ServerSocketChannel server, byte[] reply) {
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
            ByteBuffer out = ByteBuffer.wrap(reply);
            while (out.hasRemaining()) {
                c.write(out);
            }
            return got.toByteArray();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static boolean whole(byte[] request) {
        String text = new String(request, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) {
            return false;
        }
        for (String line : text.substring(0, end).split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                return request.length - end - 4 >= Integer.parseInt(line.substring(15).strip());
            }
        }
        return true;
    }

    /** An answer as a serve writes it: status 200, the two headers, stdout then stderr. */
    private static byte[] ran(int code, String stdout, String stderr) {
        ServeWire.Printed p = new ServeWire.Printed(code, stdout.getBytes(StandardCharsets.UTF_8),
                stderr.getBytes(StandardCharsets.UTF_8));
        String head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" + ServeWire.EXIT_CODE + ": " + code
                + "\r\n" + ServeWire.STDOUT_LENGTH + ": " + p.stdout().length + "\r\nContent-Length: " + p.body().length
                + "\r\n\r\n";
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(p.body());
        return all.toByteArray();
    }

    @Test
    void aCommandLineIsTheRequestServeWireWritesAndTheAnswerIsReadAsItReadsIt(NetworkNamespace host) throws Exception {
        List<String> args = List.of("--netns", host.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "wéb 1");
        List<String> command = new ArrayList<>(List.of(client.toString()));
        command.addAll(args);
        byte[] reply = ran(3, "printed on stdout\n", "gatun: port 8080 is held by web-2\n");

        Exchange e = exchange(host, command, Map.of(), new byte[0], reply);

        assertThat(e.request()).isEqualTo(ServeWire.request(ServeWire.CLI_PATH, ServeWire.commandLine(args)));
        assertThat(e.request()).as("what ServeClient sends for the same line").isEqualTo(ServeClient.cliRequest(args));
        ServeWire.Printed read = ((ServeWire.Reply.Ran) ServeWire.reply(reply)).printed();
        assertThat(e.exitCode()).isEqualTo(read.code()).isEqualTo(3);
        assertThat(e.stdout()).isEqualTo(new String(read.stdout(), StandardCharsets.UTF_8)).isEqualTo("printed on stdout\n");
        assertThat(e.stderr()).isEqualTo(new String(read.stderr(), StandardCharsets.UTF_8))
                .isEqualTo("gatun: port 8080 is held by web-2\n");
    }

    @Test
    void aCniCallIsItsVariablesThenTheConfig(NetworkNamespace host) throws Exception {
        byte[] config = "{\"cniVersion\": \"1.1.0\", \"name\": \"n1\", \"type\": \"gatun\"}".getBytes(StandardCharsets.UTF_8);
        Map<String, String> env = Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", "c-1", "CNI_IFNAME", "eth0",
                "CNI_NETNS", "/run/netns/x", "CNI_PATH", "/opt/cni/bin");
        List<String> command = List.of("ip", "netns", "exec", host.name(), client.toString());

        Exchange e = exchange(host, command, env, config, ran(0, "{\"cniVersion\": \"1.1.0\"}\n", ""));

        String text = new String(e.request(), StandardCharsets.ISO_8859_1);
        int body = text.indexOf("\r\n\r\n") + 4;
        assertThat(text).startsWith("POST " + ServeWire.CNI_PATH + " HTTP/1.1\r\n");
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

        assertThat(e.request()).isEqualTo(ServeWire.request(ServeWire.NETAVARK_PATH, ServeWire.netavarkCall(args, stdin)));
        String text = new String(e.request(), StandardCharsets.ISO_8859_1);
        int body = text.indexOf("\r\n\r\n") + 4;
        ServeWire.NetavarkCall call = ServeWire.netavarkCall(Arrays.copyOfRange(e.request(), body, e.request().length));
        assertThat(call.args()).isEqualTo(args);
        assertThat(call.stdin()).isEqualTo(stdin);
        assertThat(e.exitCode()).isZero();
        assertThat(e.stdout()).isEqualTo("{\"interfaces\": {}}\n");
    }

    @Test
    void aRefusalAndABrokenAnswerAreTheSameToBothReaders(NetworkNamespace host) throws Exception {
        List<String> command = List.of(client.toString(), "--netns", host.name(), "ls");
        byte[] refused = ("HTTP/1.1 421 Misdirected Request\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                .getBytes(StandardCharsets.US_ASCII);
        assertThat(ServeWire.reply(refused)).isInstanceOf(ServeWire.Reply.Refused.class);
        Exchange r = exchange(host, command, Map.of(), new byte[0], refused);
        assertThat(r.exitCode()).as("refused: run it yourself (exit 125 with no launcher to run)").isEqualTo(125);
        assertThat(r.stdout()).isEmpty();

        byte[] cut = Arrays.copyOf(ran(0, "a whole listing\n", ""), 80);
        assertThat(ServeWire.reply(cut)).isInstanceOf(ServeWire.Reply.Broken.class);
        Exchange b = exchange(host, command, Map.of(), new byte[0], cut);
        assertThat(b.exitCode()).as("broken: it may have run, so it is not run again").isEqualTo(1);
        assertThat(b.stderr()).contains("stopped answering");
    }
}
