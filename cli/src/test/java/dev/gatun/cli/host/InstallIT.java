package dev.gatun.cli.host;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gatun install} of this checkout on a scratch prefix and unit directory, and what was
 * installed at work: the unit as systemd reads it, the serve's readiness through a NOTIFY_SOCKET
 * of the test's own, the installed gatun command (the C client) running a one-shot command
 * through the serve with no other process, and uninstall leaving the prefix as it was.
 */
@ExtendWith(FreshNamespaces.class)
class InstallIT {

    @TempDir
    Path tmp;

    private Path prefix() {
        return tmp.resolve("prefix");
    }

    private Path units() {
        return tmp.resolve("units");
    }

    private GatunCli.Run install(String... more) {
        List<String> args = new java.util.ArrayList<>(List.of("install", "--prefix", prefix().toString(),
                "--unit-dir", units().toString()));
        args.addAll(List.of(more));
        // GATUN_NO_CLIENT: the launcher's own JVM path, never a serve another test runs.
        GatunCli.Run r = GatunCli.runWith(Map.of("GATUN_NO_CLIENT", "1"), args.toArray(String[]::new));
        assertThat(r.code()).as("gatun install: %s", r.err()).isZero();
        return r;
    }

    private GatunCli.Run installed(Map<String, String> env, String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of(prefix().resolve("bin/gatun").toString()));
        cmd.addAll(List.of(args));
        return GatunCli.runProgram(cmd, env);
    }

    @Test
    void installedTwiceUnitVerifiedBySystemdThenUninstalledToThePrefixAsItWas() throws Exception {
        Files.createDirectories(prefix().resolve("bin"));
        Files.writeString(prefix().resolve("bin/theirs"), "not gatun's");
        Map<String, String> before = tree(tmp);
        Path cni = tmp.resolve("cni-bin");
        Path netavark = tmp.resolve("netavark-plugins");

        GatunCli.Run first = install("--cni-bin-dir", cni.toString(), "--netavark-plugin-dir", netavark.toString());
        assertThat(first.out()).contains("installed: " + prefix().resolve("bin/gatun"),
                "installed: " + units().resolve("gatun.service"));
        Path unit = units().resolve("gatun.service");
        assertThat(systemdAnalyzeVerify(unit)).as("systemd-analyze verify of the installed unit").isEqualTo("");
        // The control: the same check refuses a unit whose ExecStart is not there.
        Path broken = tmp.resolve("broken/gatun.service");
        Files.createDirectories(broken.getParent());
        Files.writeString(broken, Files.readString(unit).replace(prefix().resolve("lib/gatun/gatun").toString(),
                tmp.resolve("nowhere/gatun").toString()));
        assertThat(systemdAnalyzeVerify(broken)).contains("nowhere/gatun");
        Files.delete(broken);
        Files.delete(broken.getParent());

        // The installed command is a compiled program, and runs the JVM path without a serve.
        byte[] head = new byte[4];
        try (InputStream in = Files.newInputStream(prefix().resolve("bin/gatun"))) {
            assertThat(in.read(head)).isEqualTo(4);
        }
        assertThat(head).containsExactly(0x7f, 'E', 'L', 'F');
        GatunCli.Run version = installed(Map.of(), "--version");
        assertThat(version.code()).as(version.err()).isZero();
        assertThat(version.out()).contains("gatun");
        assertThat(Files.readSymbolicLink(cni.resolve("gatun"))).isEqualTo(prefix().resolve("bin/gatun"));

        GatunCli.Run again = install();
        assertThat(again.out()).doesNotContain("installed: ", "replaced: ").contains("unchanged: " + unit,
                "kept (installed before): " + cni.resolve("gatun"));

        GatunCli.Run removed = installed(Map.of(), "uninstall", "--prefix", prefix().toString());
        assertThat(removed.code()).as(removed.err()).isZero();
        assertThat(tree(tmp)).isEqualTo(before);
        GatunCli.Run nothing = GatunCli.run("uninstall", "--prefix", prefix().toString());
        assertThat(nothing.code()).isZero();
        assertThat(nothing.out()).contains("nothing installed under " + prefix());

        // Installed again after the uninstall: all of it comes back, and goes again.
        GatunCli.Run third = install("--cni-bin-dir", cni.toString(), "--netavark-plugin-dir", netavark.toString());
        assertThat(third.out()).contains("installed: " + prefix().resolve("bin/gatun"), "installed: " + unit);
        assertThat(systemdAnalyzeVerify(unit)).isEqualTo("");
        assertThat(Files.readSymbolicLink(cni.resolve("gatun"))).isEqualTo(prefix().resolve("bin/gatun"));
        GatunCli.Run removedAgain = installed(Map.of(), "uninstall", "--prefix", prefix().toString());
        assertThat(removedAgain.code()).as(removedAgain.err()).isZero();
        assertThat(tree(tmp)).isEqualTo(before);
    }

    /**
     * What the issue asks of gatun.service, read from the installed unit: notify, restarted on
     * failure, before the engines, and no capability in its bounding set but CAP_NET_ADMIN and
     * those the serve's work needs (namespaces, other processes' sockets, iptables).
     */
    @Test
    void theInstalledUnitIsNotifyRestartedBeforeTheEnginesAndBoundedToItsCapabilities() throws Exception {
        install();
        Map<String, String> unit = new java.util.HashMap<>();
        for (String line : Files.readAllLines(units().resolve("gatun.service"))) {
            int eq = line.indexOf('=');
            if (eq > 0 && !line.startsWith("#")) {
                unit.merge(line.substring(0, eq), line.substring(eq + 1), (a, b) -> a + " " + b);
            }
        }
        assertThat(unit).containsEntry("Type", "notify").containsEntry("Restart", "on-failure")
                .containsEntry("NoNewPrivileges", "yes");
        assertThat(List.of(unit.get("Before").split(" "))).contains("docker.service", "containerd.service");
        assertThat(List.of(unit.get("CapabilityBoundingSet").split(" "))).contains("CAP_NET_ADMIN")
                .isSubsetOf("CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE");
        assertThat(unit.get("ExecStart")).isEqualTo(prefix().resolve("lib/gatun/gatun") + " serve");
        GatunCli.Run removed = installed(Map.of(), "uninstall", "--prefix", prefix().toString());
        assertThat(removed.code()).as(removed.err()).isZero();
    }

    @Test
    void theInstalledServeSendsReadyOnlyOnceItsApiAnswersAndStoppingAtSigterm(NetworkNamespace host) throws Throwable {
        install("--no-systemd");
        Path api = Path.of("/run/gatun/netns-" + host.inode() + ".sock");
        try (NotifyListener systemd = NotifyListener.bind(tmp.resolve("notify.sock"))) {
            CompletableFuture<String> readyAndAnswer = CompletableFuture.supplyAsync(() -> {
                try {
                    String state = systemd.next(Duration.ofSeconds(120));
                    // At READY=1 systemd starts what is ordered after gatun: the API must answer now, first try.
                    return state + "\n--- answer: " + get(api, "/v1/networks");
                } catch (Throwable t) {
                    throw new RuntimeException(t);
                }
            });
            // With its warm-up, as gatun.service starts it: READY=1 comes after it.
            try (GatunServe serve = GatunServe.startLauncherWarmingUp(prefix().resolve("lib/gatun/gatun"),
                    Map.of("NOTIFY_SOCKET", systemd.path().toString()), "--netns", host.name(), "serve")) {
                String got = readyAndAnswer.get(150, TimeUnit.SECONDS);
                assertThat(serve.stderr()).as("READY=1 after the warm-up").contains("warmed up");
                assertThat(got).startsWith("READY=1\nSTATUS=serving API on " + api).contains("--- answer: HTTP/1.1 200");
                assertThat(serve.terminate()).isZero();
                assertThat(systemd.next(Duration.ofSeconds(10))).isEqualTo("STOPPING=1");
                assertThat(serve.stderr()).doesNotContain("could not tell systemd");
            }
        }
        // Nobody listening on NOTIFY_SOCKET: the serve says so and serves all the same.
        try (GatunServe serve = GatunServe.startLauncher(prefix().resolve("lib/gatun/gatun"),
                Map.of("NOTIFY_SOCKET", tmp.resolve("nobody.sock").toString()), "--netns", host.name(), "serve")) {
            assertThat(get(api, "/v1/networks")).startsWith("HTTP/1.1 200");
            assertThat(serve.stderr()).contains("could not tell systemd READY=1");
        }
    }

    /**
     * gatun.service's serve cannot write PREFIX/lib/gatun (ProtectSystem=full): install makes the
     * serve's cache, and a serve whose lib directory is read-only starts from it. The control:
     * without the cache the same read-only serve runs without one, and makes none.
     */
    @Test
    void installMakesTheServesCacheThatAReadOnlyServeStartsFrom(NetworkNamespace host) throws Exception {
        GatunCli.Run first = install("--no-systemd");
        Path cache = prefix().resolve("lib/gatun/gatun-serve.aot");
        assertThat(first.out()).contains("trained: " + cache);
        assertThat(cache).isRegularFile();
        assertThat(install("--no-systemd").out()).contains("unchanged: " + cache);

        assertThat(readOnlyServeJavaFlags(host)).contains("-XX:AOTCache=" + cache);
        Files.delete(cache);
        assertThat(readOnlyServeJavaFlags(host)).noneMatch(a -> a.startsWith("-XX:AOTCache"));
        assertThat(cache).doesNotExist();
    }

    /** The command line of the JVM a serve of the installed launcher runs with PREFIX/lib/gatun mounted read-only. */
    private List<String> readOnlyServeJavaFlags(NetworkNamespace host) throws IOException, InterruptedException {
        Path lib = prefix().resolve("lib/gatun");
        // A mount namespace of its own: the read-only bind mount goes with the serve.
        List<String> sandbox = List.of("unshare", "-m", "--propagation", "private", "sh", "-c",
                "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\"", lib.toString());
        try (GatunServe serve = GatunServe.startLauncher(sandbox, lib.resolve("gatun"), Map.of(), "--netns", host.name(),
                "serve")) {
            // unshare, sh and the launcher each exec the next: the process started is the JVM.
            List<String> args = List.of(Files.readString(Path.of("/proc/" + serve.pid() + "/cmdline")).split("\0"));
            assertThat(args.getFirst()).endsWith("/bin/java");
            assertThat(serve.terminate()).isZero();
            return args;
        }
    }

    @Test
    void theInstalledCommandRunsAPublishThroughTheServeWithNoOtherProcess(NetworkNamespace host) throws Exception {
        install("--no-systemd");
        String ns = host.name();
        Path trace = tmp.resolve("execve.trace");
        List<String> publish = List.of("--netns", ns, "publish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "c1");
        try (GatunServe serve = GatunServe.startLauncher(prefix().resolve("lib/gatun/gatun"), Map.of(),
                "--netns", ns, "serve")) {
            assertThat(installed(Map.of(), "--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/24").code()).isZero();
            GatunCli.Run run = traced(trace, publish);
            assertThat(run.code()).as(run.err()).isZero();
            assertThat(execs(trace)).as("programs started by the installed gatun publish").hasSize(1)
                    .allMatch(line -> line.contains(prefix().resolve("bin/gatun").toString()));
            assertThat(installed(Map.of(), "--netns", ns, "ls").out()).contains("8080", "10.88.0.2", "c1");
            // Installing again where that serve runs: it keeps the code it started with, so install says to restart it.
            GatunCli.Run again = GatunCli.runProgram(List.of("ip", "netns", "exec", ns, GatunCli.launcher().toString(),
                    "install", "--prefix", tmp.resolve("again").toString(), "--no-systemd"), Map.of("GATUN_NO_CLIENT", "1"));
            assertThat(again.code()).as(again.err()).isZero();
            assertThat(again.out() + again.err()).contains("a gatun serve answers on " + ServeSockets.of(host), "restart it");
            assertThat(serve.terminate()).isZero();
        }
        // The control: without a serve the same trace sees the launcher's shell and the JVM.
        GatunCli.Run alone = traced(trace, List.of("--netns", ns, "unpublish", "n1", "10.88.0.2", "-p", "8080:80", "--owner", "c1"));
        assertThat(alone.code()).as(alone.err()).isZero();
        assertThat(execs(trace)).hasSizeGreaterThan(1).anyMatch(line -> line.contains("/bin/java"));
    }

    /**
     * The client reads the answer up to the lengths its first line gives and exits: a stand-in serve on the
     * namespace's calls socket answers and then holds the connection open for a minute.
     */
    @Test
    void theInstalledCommandExitsAtTheEndOfTheAnswerWithoutWaitingForTheClose(NetworkNamespace host) throws Exception {
        install("--no-systemd");
        Path dir = Path.of("/run/gatun");
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        Path socket = dir.resolve("netns-" + host.inode() + ".calls.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socket));
            CompletableFuture<Void> standIn = CompletableFuture.runAsync(() -> {
                try (SocketChannel c = server.accept()) {
                    readRequest(c);
                    String out = "stdout of the stand-in\n";
                    String err = "stderr of the stand-in\n";
                    c.write(ByteBuffer.wrap(("200 3 " + out.length() + " " + err.length() + "\n" + out + err)
                            .getBytes(StandardCharsets.UTF_8)));
                    Thread.sleep(60_000); // the connection stays open
                } catch (IOException | InterruptedException e) {
                    // the test ended
                }
            });
            Process p = new ProcessBuilder(prefix().resolve("bin/gatun").toString(), "--netns", host.name(), "ls").start();
            p.getOutputStream().close();
            boolean exited = p.waitFor(20, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            assertThat(exited).as("the client exited while the stand-in still held the connection").isTrue();
            assertThat(p.exitValue()).isEqualTo(3);
            assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("stdout of the stand-in\n");
            assertThat(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("stderr of the stand-in\n");
            standIn.cancel(true);
        } finally {
            Files.deleteIfExists(socket);
        }
    }

    private GatunCli.Run traced(Path trace, List<String> args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("strace", "-f", "-qq", "-e", "trace=execve", "-o", trace.toString(),
                prefix().resolve("bin/gatun").toString()));
        cmd.addAll(args);
        return GatunCli.runProgram(cmd, Map.of());
    }

    /** The execve calls of a trace that succeeded. */
    private static List<String> execs(Path trace) throws IOException {
        return Files.readAllLines(trace).stream().filter(l -> l.contains("execve(") && l.contains("= 0")).toList();
    }

    private static String systemdAnalyzeVerify(Path unit) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("systemd-analyze", "verify", unit.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return p.exitValue() == 0 ? out.strip() : "exit " + p.exitValue() + ": " + out;
    }

    /** GET path on the serve's API socket: the status line and head. */
    private static String get(Path socket, String path) throws IOException {
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            c.write(ByteBuffer.wrap(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8)));
            return new String(Channels.newInputStream(c).readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Reads a request's head and its Content-Length of body. */
    /** Reads a call whole: its first line ("cli LENGTH"), then LENGTH bytes. */
    private static void readRequest(SocketChannel c) throws IOException {
        InputStream in = Channels.newInputStream(c);
        StringBuilder head = new StringBuilder();
        for (int b = in.read(); b >= 0 && b != '\n'; b = in.read()) {
            head.append((char) b);
        }
        String[] fields = head.toString().split(" ");
        if (fields.length == 2) {
            in.readNBytes(Integer.parseInt(fields[1]));
        }
    }

    private static Map<String, String> tree(Path root) throws IOException {
        Map<String, String> t = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.toList()) {
                t.put(root.relativize(p).toString(), Files.isSymbolicLink(p) ? "-> " + Files.readSymbolicLink(p)
                        : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir" : Files.readString(p));
            }
        }
        return t;
    }
}
