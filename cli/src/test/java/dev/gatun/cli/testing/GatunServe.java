package dev.gatun.cli.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ./gatun --netns NS serve [--docker-plugin NAME]} as a child process: waits for its one
 * {@code ready} line on stdout, keeps everything it writes to stderr (in a file), stops it with SIGTERM. On
 * {@link #close()} the process (and, should it still be in the launcher's build, its children)
 * is gone and its plugin socket file removed, whatever happened before.
 */
public final class GatunServe implements AutoCloseable {

    /** Generous: the launcher builds the jar first when the sources are newer than it. */
    public static final Duration READY_TIMEOUT = Duration.ofSeconds(180);
    public static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
    public static final Path PLUGIN_DIR = Path.of("/run/docker/plugins");

    private final List<String> args;
    private final Process process;
    private final String plugin; // null without --docker-plugin
    /**
     * Its stderr, a file rather than a pipe: when a process exits, the JDK closes the pipe under a
     * thread that reads it and what was still unread (the stop's lines) is lost.
     */
    private final Path stderrFile;
    /** What {@link #stderrFile} held when the serve was closed (and the file removed); null before. */
    private volatile String stderrAtClose;
    private final List<String> stdoutLines = new ArrayList<>();
    private final BlockingQueue<String> firstLine = new LinkedBlockingQueue<>();
    private String ready;
    /** The API socket in the ready line ("ready: API on /run/gatun/netns-N.sock, ..."). */
    private static final Pattern API_SOCKET = Pattern.compile("API on (/\\S+\\.sock)");

    private GatunServe(List<String> args, Process process, String plugin, Path stderrFile) {
        this.args = args;
        this.process = process;
        this.plugin = plugin;
        this.stderrFile = stderrFile;
    }

    /**
     * A plugin name no other test, run or dockerd on this host uses: /run/docker/plugins is
     * shared by every dockerd.
     */
    public static String uniquePluginName() {
        return "gatun-t" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    }

    public static Path socketOf(String plugin) {
        return PLUGIN_DIR.resolve(plugin + ".sock");
    }

    /** Starts {@code gatun --netns NS serve} and waits until it is ready. */
    public static GatunServe start(String namespace) {
        return start(namespace, null);
    }

    /** Starts {@code gatun --netns NS serve --docker-plugin NAME} (without it when plugin is null) and waits until it is ready. */
    public static GatunServe start(String namespace, String plugin, String... serveOptions) {
        return start(Map.of(), namespace, plugin, serveOptions);
    }

    /** As {@link #start(String, String, String...)}, with {@code env} added to this process's environment. */
    public static GatunServe start(Map<String, String> env, String namespace, String plugin, String... serveOptions) {
        List<String> args = new ArrayList<>(List.of("--netns", namespace, "serve"));
        if (plugin != null) {
            args.addAll(List.of("--docker-plugin", plugin));
        }
        args.addAll(List.of(serveOptions));
        return launch(List.of(GatunCli.launcher().toString()), env, args, plugin);
    }

    /**
     * Starts the launcher with {@code args} behind {@code prefix} (a command that runs it
     * elsewhere: in the test bed, say) and waits until it is ready.
     */
    public static GatunServe startWith(List<String> prefix, List<String> args, String plugin) {
        return startWith(prefix, args, plugin, false);
    }

    /** As {@link #startWith(List, List, String)}, with the serve's warm-up when {@code warmUp} (as gatun.service runs it). */
    public static GatunServe startWith(List<String> prefix, List<String> args, String plugin, boolean warmUp) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(GatunCli.launcher().toString());
        return launch(cmd, Map.of(), args, plugin, warmUp);
    }

    /**
     * Starts {@code launcher} (another gatun's: an installed one, say) with {@code args}, with
     * {@code env} added to this process's environment, and waits until it is ready.
     */
    public static GatunServe startLauncher(Path launcher, Map<String, String> env, String... args) {
        return startLauncher(List.of(), launcher, env, args);
    }

    /** As {@link #startLauncher(Path, Map, String...)}, with the serve's warm-up, as gatun.service runs it. */
    public static GatunServe startLauncherWarmingUp(Path launcher, Map<String, String> env, String... args) {
        return launch(List.of(launcher.toString()), env, List.of(args), null, true);
    }

    /** As {@link #startLauncher(Path, Map, String...)}, behind {@code prefix} (a command that runs it in a sandbox, say). */
    public static GatunServe startLauncher(List<String> prefix, Path launcher, Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(launcher.toString());
        return launch(cmd, env, List.of(args), null);
    }

    /**
     * Starts {@code gatun --netns NS serve} with its warm-up (the fixture's other starts skip it:
     * five seconds and more before every serve's ready line, for tests that measure nothing).
     */
    public static GatunServe startWarmingUp(String namespace) {
        return launch(List.of(GatunCli.launcher().toString()), Map.of(), List.of("--netns", namespace, "serve"), null, true);
    }

    private static GatunServe launch(List<String> command, Map<String, String> env, List<String> args, String plugin) {
        return launch(command, env, args, plugin, false);
    }

    private static GatunServe launch(List<String> command, Map<String, String> env, List<String> args, String plugin,
                                     boolean warmUp) {
        List<String> cmd = new ArrayList<>(command);
        int serveAt = args.indexOf("serve");
        if (!warmUp && serveAt >= 0) {
            args = new ArrayList<>(args);
            args.add(serveAt + 1, "--no-warm-up");
        }
        cmd.addAll(args);
        Process p;
        Path err = null;
        try {
            err = Files.createTempFile("gatun-serve-", ".stderr");
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(GatunCli.ROOT.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectError(err.toFile());
            pb.environment().putAll(env);
            p = pb.start();
        } catch (IOException e) {
            try {
                if (err != null) {
                    Files.deleteIfExists(err);
                }
            } catch (IOException | RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw new AssertionError("cannot start " + cmd, e);
        }
        GatunServe serve = new GatunServe(List.copyOf(args), p, plugin, err);
        serve.pump();
        try {
            serve.awaitReady();
            return serve;
        } catch (RuntimeException | Error e) {
            try {
                serve.close();
            } catch (RuntimeException | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void pump() {
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                boolean first = true;
                while ((line = r.readLine()) != null) {
                    synchronized (stdoutLines) {
                        stdoutLines.add(line);
                    }
                    if (first) {
                        firstLine.add(line);
                        first = false;
                    }
                }
            } catch (IOException ignored) {
                // the process is gone
            }
        });
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                String line = firstLine.poll(50, TimeUnit.MILLISECONDS);
                if (line != null) {
                    if (!line.startsWith("ready")) {
                        throw new AssertionError(describe() + " printed '" + line + "' first, not a line starting with 'ready'"
                                + "\nstderr: " + stderr());
                    }
                    ready = line;
                    return;
                }
                if (!process.isAlive()) {
                    process.waitFor(2, TimeUnit.SECONDS);
                    Thread.sleep(100); // let the pumps take the last of its output
                    throw new AssertionError(describe() + " exited with " + process.exitValue() + " before it was ready"
                            + "\nstdout: " + stdout() + "\nstderr: " + stderr());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + describe(), e);
        }
        throw new AssertionError(describe() + " printed no ready line within " + READY_TIMEOUT.toSeconds() + " s"
                + "\nstderr: " + stderr());
    }

    public String describe() {
        return "gatun " + String.join(" ", args);
    }

    /** The ready line. */
    public String readyLine() {
        return ready;
    }

    public String stderr() {
        String closed = stderrAtClose;
        if (closed != null) {
            return closed;
        }
        try {
            // Bytes, not Files.readString: a line being written may end in half a character.
            return new String(Files.readAllBytes(stderrFile), StandardCharsets.UTF_8);
        } catch (java.nio.file.NoSuchFileException e) {
            // Closed by another thread meanwhile: what it kept.
            if (stderrAtClose != null) {
                return stderrAtClose;
            }
            throw new AssertionError("the serve's stderr " + stderrFile + " is gone", e);
        } catch (IOException e) {
            throw new AssertionError("cannot read the serve's stderr in " + stderrFile, e);
        }
    }

    public String stdout() {
        synchronized (stdoutLines) {
            return String.join("\n", stdoutLines);
        }
    }

    public List<String> stdoutLines() {
        synchronized (stdoutLines) {
            return List.copyOf(stdoutLines);
        }
    }

    /** How much stderr there is now, to look only at what comes after. */
    public int stderrMark() {
        return stderr().length();
    }

    /** Whether stderr after {@code mark} contains {@code text} within {@code within}. */
    public boolean awaitStderr(int mark, String text, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        do {
            String now = stderr();
            if (now.substring(Math.min(mark, now.length())).contains(text)) {
                return true;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        return false;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public long pid() {
        return process.pid();
    }

    public String plugin() {
        return plugin;
    }

    /** SIGKILL, as a crash or the OOM killer ends it: nothing of it runs, its socket files stay behind (until {@link #close}). */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new AssertionError(describe() + " did not die of SIGKILL");
        }
    }

    /** Sends SIGTERM and returns the exit code; kills it (and fails) if it does not stop in time. */
    public int terminate() throws InterruptedException {
        process.destroy(); // SIGTERM
        if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            killAll();
            throw new AssertionError(describe() + " did not exit within " + STOP_TIMEOUT.toSeconds()
                    + " s of SIGTERM; killed it\nstderr: " + stderr());
        }
        return process.exitValue();
    }

    private void killAll() throws InterruptedException {
        List<ProcessHandle> family = new ArrayList<>(process.descendants().toList());
        process.destroyForcibly();
        family.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(10, TimeUnit.SECONDS);
        for (ProcessHandle ph : family) {
            ph.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(t -> ph).join();
        }
    }

    /** Stops the process whatever state it is in and removes its socket file. Never leaves either behind. */
    @Override
    public void close() {
        try {
            if (process.isAlive()) {
                // Children exist only while the launcher still builds (it execs java after).
                List<ProcessHandle> family = process.descendants().toList();
                process.destroy();
                if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                    killAll();
                }
                family.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        } finally {
            if (stderrAtClose == null && !process.isAlive()) {
                stderrAtClose = stderr();
                try {
                    Files.deleteIfExists(stderrFile);
                } catch (IOException e) {
                    // a file in the temporary directory: left for its cleaning
                }
            }
            if (plugin != null) {
                try {
                    Files.deleteIfExists(socketOf(plugin));
                } catch (IOException e) {
                    throw new AssertionError("cannot remove " + socketOf(plugin), e);
                }
            }
            if (!process.isAlive()) {
                // A serve killed (kill(), or a crash a test provokes) leaves its two sockets under /run/gatun.
                ownSockets().forEach(GatunServe::removeIfNobodyListens);
            }
        }
    }

    /** The serve's API socket, as its ready line names it, and its one-shot socket beside it; none before ready. */
    private List<Path> ownSockets() {
        Matcher m = ready == null ? null : API_SOCKET.matcher(ready);
        if (m == null || !m.find()) {
            return List.of();
        }
        String api = m.group(1);
        return List.of(Path.of(api), Path.of(api.substring(0, api.length() - ".sock".length()) + ".calls.sock"));
    }

    /** Removes a socket file no process listens on any more: one a later serve of the namespace took stays. */
    private static void removeIfNobodyListens(Path socket) {
        if (!Files.exists(socket)) {
            return;
        }
        try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            return; // another serve listens there now
        } catch (IOException refused) {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                throw new AssertionError("cannot remove " + socket + ", left by a serve that is gone", e);
            }
        }
    }
}
