package dev.gatun.bench;

import dev.gatun.netns.NetworkNamespace;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code gatun serve} for one namespace, started through the launcher as its users start it
 * ({@code ./gatun --netns NS serve}, no request log: a line written per request is work a
 * host's serve does not do), with its log read: the line it logs when it stops counts the
 * commands it ran for clients and those that exited other than 0, so the harness can tell how
 * many of its one-shot commands really went through the serve and did not fall back to a JVM.
 */
final class Serve implements AutoCloseable {

    /** How long a serve may take to print its ready line: a JVM start, and reading every mapping present. */
    private static final long READY_SECONDS = 120;

    /** The socket a client in the namespace looks for: named after the namespace's inode. */
    final Path socket;
    private final Process process;
    private final CompletableFuture<String> ready = new CompletableFuture<>();
    /**
     * Its stderr, the log: a file rather than a pipe, so that what it wrote is all there once it
     * has exited (lines read from a pipe by a thread could still be on their way).
     */
    private final Path logFile;
    /** Requests this harness sent the serve itself (the warm-up, the soak's clients), each a command it ran. */
    private final AtomicInteger sent = new AtomicInteger();

    /** Runs {@code cmd}, a serve (or in a test, what stands in for one) that listens on {@code socket}. */
    Serve(List<String> cmd, Path socket) {
        this(cmd, socket, Map.of());
    }

    /** {@link #Serve(List, Path)} with {@code env} added to its environment. */
    Serve(List<String> cmd, Path socket, Map<String, String> env) {
        this.socket = socket;
        try {
            logFile = Files.createTempFile("gatun-bench-serve-", ".log");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(logFile.toFile());
            pb.environment().putAll(env);
            process = pb.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        }
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // it reads nothing
        }
        reader(process.getInputStream(), "stdout", line -> {
            if (line.startsWith("ready")) {
                ready.complete(line);
            }
        });
    }

    /** Starts a serve for {@code ns}; {@link #awaitReady} waits for it. */
    static Serve launch(Path launcher, NetworkNamespace ns) {
        return launch(launcher, ns, Map.of());
    }

    private static Serve launch(Path launcher, NetworkNamespace ns, Map<String, String> env) {
        return new Serve(List.of(launcher.toString(), "--netns", ns.name(), "serve"),
                Path.of("/run/gatun/netns-" + ns.inode() + ".calls.sock"), env);
    }

    /** Starts a serve for {@code ns} and waits until it prints its ready line. */
    static Serve start(Path launcher, NetworkNamespace ns) {
        return started(launch(launcher, ns));
    }

    /**
     * {@link #start}, the serve's JVM logging its collections and deoptimizations to
     * {@code jitLogs}/jit-PID.log (PID: the serve's; a training run the launcher starts first
     * logs under its own): {@link JitTraps} reads where its compiled code trapped.
     */
    static Serve startLoggingTraps(Path launcher, NetworkNamespace ns, Path jitLogs) {
        String logging = "-Xlog:gc,deoptimization=debug:file=" + jitLogs.resolve("jit-%p.log") + ":uptime";
        String given = System.getenv("JAVA_TOOL_OPTIONS");
        return started(launch(launcher, ns,
                Map.of("JAVA_TOOL_OPTIONS", given == null || given.isBlank() ? logging : given + " " + logging)));
    }

    private static Serve started(Serve s) {
        try {
            s.awaitReady();
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** Waits until the serve has printed its ready line and its socket exists. */
    void awaitReady() {
        try {
            ready.get(READY_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("gatun serve did not get ready: " + e.getMessage() + "; its log:\n  "
                    + String.join("\n  ", log()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (!Files.exists(socket)) {
            throw new IllegalStateException("gatun serve is ready but " + socket + " does not exist");
        }
    }

    /**
     * Brings the serve to the steady state of a serve that has been answering commands for a
     * while, as the in-process tools are brought to theirs (Worker): sends {@code command} and
     * then {@code undo}, each exactly as the C client sends a command line, in blocks of 250
     * pairs, until its JIT compiler threads have used no CPU for three blocks in a row (at least
     * four blocks), or for at most {@code limitMs}. On this machine a serve's publish, timed from
     * the socket, takes about 3 ms after 250 pairs, 1 ms after 1,000 and 0.7 ms after 2,500.
     * Returns how many requests it sent.
     */
    int warmUp(List<String> command, List<String> undo, long limitMs) {
        long deadline = System.nanoTime() + limitMs * 1_000_000;
        int before = sent.get();
        long compiled = cpuTicks(true);
        for (int idle = 0, block = 0; (idle < 3 || block < 4) && System.nanoTime() < deadline; block++) {
            for (int i = 0; i < 250 && System.nanoTime() < deadline; i++) {
                send(command);
                send(undo);
            }
            long now = cpuTicks(true);
            idle = now == compiled ? idle + 1 : 0;
            compiled = now;
        }
        return sent.get() - before;
    }

    int sent() {
        return sent.get();
    }

    /**
     * One command line, as the C client sends it (on the serve's calls socket: "cli LENGTH", then
     * each argument followed by a NUL, a connection of its own); it must exit 0. Safe to call
     * from many threads.
     */
    void send(List<String> args) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (String a : args) {
            body.writeBytes(a.getBytes(StandardCharsets.UTF_8));
            body.write(0);
        }
        byte[] head = ("cli " + body.size() + "\n").getBytes(StandardCharsets.US_ASCII);
        String answer;
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ByteBuffer request = ByteBuffer.allocate(head.length + body.size()).put(head).put(body.toByteArray()).flip();
            while (request.hasRemaining()) {
                ch.write(request);
            }
            answer = new String(Channels.newInputStream(ch).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot send the serve on " + socket + " a command: " + e.getMessage(), e);
        }
        sent.incrementAndGet();
        // "STATUS EXIT STDOUT STDERR": it ran (200) and exited 0.
        if (!answer.startsWith("200 0 ")) {
            throw new IllegalStateException("the serve answered " + String.join(" ", args) + " with: "
                    + answer.lines().limit(12).toList());
        }
    }

    long pid() {
        return process.pid();
    }

    /** The lines of its log. */
    private List<String> lines() {
        try {
            return Files.readAllLines(logFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the serve's log " + logFile + ": " + e.getMessage(), e);
        }
    }

    /** The count in the serve's stop line: "ran N commands for clients, F of them exited other than 0". */
    private static final Pattern TALLY = Pattern.compile(
            "gatun serve: stopping; .*; ran (\\d+) commands? for clients, (\\d+) of them exited other than 0(; \\d+ still running, not counted)?$");

    /** The commands the serve ran and those that exited other than 0, by its stop line; null before it stopped. */
    private long[] tally() {
        for (String line : lines()) {
            Matcher m = TALLY.matcher(line);
            if (m.find()) {
                return new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
            }
        }
        return null;
    }

    /** Its log lines. */
    List<String> log() {
        return lines();
    }

    /** Reads its stdout for the ready line. */
    private void reader(InputStream in, String what, Consumer<String> each) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    each.accept(line);
                }
            } catch (IOException e) {
                // the process ended
            } finally {
                ready.completeExceptionally(new IllegalStateException("its " + what + " closed"));
            }
        }, "serve-" + what);
        t.setDaemon(true);
        t.start();
    }

    /** VmRSS and VmHWM of the serve's JVM, in KiB, from /proc/PID/status. */
    record Memory(long rssKb, long hwmKb) {}

    Memory memory() {
        long rss = -1;
        long hwm = -1;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = kib(line);
                } else if (line.startsWith("VmHWM:")) {
                    hwm = kib(line);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the serve's memory: " + e.getMessage(), e);
        }
        if (rss < 0 || hwm < 0) {
            throw new IllegalStateException("no VmRSS or VmHWM in /proc/" + pid() + "/status");
        }
        return new Memory(rss, hwm);
    }

    private static long kib(String line) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
    }

    /**
     * Waits until the serve's JIT compiler threads have used no CPU for three tenths of a second
     * in a row, at most {@code limitMs}, as the harness waits for its own JIT and its workers'
     * ({@link Worker#awaitIdleJit}, at most ten seconds) after the unmeasured round.
     */
    void awaitIdleJit(long limitMs) {
        awaitIdle(true, 3, 100, limitMs);
    }

    /**
     * Waits until the whole serve has used at most one clock tick of CPU in each of
     * {@code windows} windows of {@code windowMs} in a row, at most {@code limitMs}.
     */
    void awaitIdle(int windows, long windowMs, long limitMs) {
        awaitIdle(false, windows, windowMs, limitMs);
    }

    private void awaitIdle(boolean compilersOnly, int windows, long windowMs, long limitMs) {
        long deadline = System.nanoTime() + limitMs * 1_000_000;
        long before = cpuTicks(compilersOnly);
        for (int idle = 0; idle < windows && System.nanoTime() < deadline; ) {
            try {
                Thread.sleep(windowMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = cpuTicks(compilersOnly);
            idle = now - before <= (compilersOnly ? 0 : 1) ? idle + 1 : 0;
            before = now;
        }
    }

    /** User and system clock ticks of the serve's threads (only its JIT compiler threads, if asked). */
    private long cpuTicks(boolean compilersOnly) {
        long ticks = 0;
        try (var tasks = Files.list(Path.of("/proc/" + pid() + "/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    if (compilersOnly && !Files.readString(task.resolve("comm")).contains("CompilerThre")) {
                        continue;
                    }
                    String stat = Files.readString(task.resolve("stat"));
                    // Fields after the command (which may hold spaces), from field 3 on: utime is 14, stime 15.
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                } catch (IOException e) {
                    // a thread that ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the serve's threads: " + e.getMessage(), e);
        }
        return ticks;
    }

    /**
     * Stops the serve with SIGTERM, as its users do, and checks that it exited 0 and removed its
     * socket, and that every command it ran exited 0. Returns how many commands it ran.
     */
    int stop() {
        process.destroy();
        int status;
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("gatun serve did not stop within 30 s of SIGTERM");
            }
            status = process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (status != 0) {
            throw new IllegalStateException("gatun serve exited " + status + " on SIGTERM; its log:\n  "
                    + String.join("\n  ", log()));
        }
        if (Files.exists(socket)) {
            throw new IllegalStateException("gatun serve exited but left " + socket);
        }
        long[] tally = tally();
        if (tally == null) {
            throw new IllegalStateException("gatun serve stopped without saying how many commands it ran; its log:\n  "
                    + String.join("\n  ", log()));
        }
        if (tally[1] != 0) {
            throw new IllegalStateException(tally[1] + " of the " + tally[0] + " commands gatun serve ran exited other"
                    + " than 0 (its --log-requests names each)");
        }
        return Math.toIntExact(tally[0]);
    }

    /** Stops it if it still runs (a failed case): SIGTERM, then SIGKILL after ten seconds; removes its log. */
    @Override
    public void close() {
        try {
            stopIfRunning();
        } finally {
            try {
                Files.deleteIfExists(logFile);
            } catch (IOException e) {
                System.err.println("bench: cannot remove " + logFile + ": " + e.getMessage());
            }
        }
    }

    private void stopIfRunning() {
        if (process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
        // Killed, or died, it could not remove its socket: nothing answers there any more.
        if (!process.isAlive()) {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException e) {
                System.err.println("bench: cannot remove " + socket + ": " + e.getMessage());
            }
        }
    }
}
