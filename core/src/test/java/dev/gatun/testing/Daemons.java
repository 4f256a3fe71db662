package dev.gatun.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What the fixtures that run real daemons in a test's namespace (DockerLab, Firewalld) share:
 * finding a tool, running a command with bounded waits, starting a daemon with its output in a
 * log, waiting until it answers, stopping it, and killing what it left behind. Each fixture
 * keeps what is its own: which daemons, their environment, their readiness checks.
 */
public final class Daemons {

    /** How long a command's output may stay open after it exited (a child it left may hold it). */
    private static final Duration OUTPUT_OPEN = Duration.ofSeconds(10);
    /** How long a daemon killed after SIGTERM, or a leftover process, may take to be reaped. */
    private static final Duration REAP = Duration.ofSeconds(10);

    /** What a command returned. */
    public record Result(int exitCode, String stdout, String stderr) {
        /** stdout and stderr, for messages. */
        @Override
        public String toString() {
            return "exit " + exitCode + ", stdout: " + stdout.strip() + ", stderr: " + stderr.strip();
        }
    }

    /** Whether a daemon answers yet. */
    @FunctionalInterface
    public interface Check {
        boolean ok() throws IOException;
    }

    private Daemons() {}

    /**
     * The distribution's binary first: a newer build of a tool in /usr/local/bin (a docker client
     * on some machines) should not be the one that talks to the distribution's daemon.
     */
    public static Optional<Path> tool(String name) {
        Stream<String> dirs = Stream.concat(Stream.of("/usr/sbin", "/usr/bin", "/sbin", "/bin"),
                Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":")));
        return dirs.filter(d -> !d.isEmpty()).map(d -> Path.of(d, name)).filter(Files::isExecutable).findFirst();
    }

    public static String toolPath(String name) {
        return tool(name).orElseThrow(() -> new AssertionError(name + " is not installed")).toString();
    }

    /**
     * Runs {@code cmd} with nothing on its stdin and the environment {@code environment} makes of
     * this process's; fails the test when it outlives {@code timeout}.
     */
    public static Result run(List<String> cmd, Consumer<Map<String, String>> environment, Duration timeout) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        environment.accept(pb.environment());
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
            CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                throw new AssertionError(String.join(" ", cmd) + " did not finish within " + timeout.toSeconds()
                        + " s; stderr so far: " + err.getNow(""));
            }
            return new Result(p.exitValue(), Bounded.get(out, OUTPUT_OPEN, "stdout after the exit"),
                    Bounded.get(err, OUTPUT_OPEN, "stderr after the exit"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted: " + String.join(" ", cmd), e);
        }
    }

    /** Starts a daemon with its stdout and stderr in {@code log} (appended to, or from empty) and /dev/null as stdin. */
    public static Process start(List<String> cmd, Path log, boolean append, Consumer<Map<String, String>> environment) {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(append ? ProcessBuilder.Redirect.appendTo(log.toFile()) : ProcessBuilder.Redirect.to(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        environment.accept(pb.environment());
        try {
            return pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Waits until {@code ready}, failing the test when the daemon exits first or {@code timeout}
     * passes; {@code output} gives the end of its logs for the message.
     */
    public static void awaitReady(String what, Check ready, Process daemon, Duration timeout, Supplier<String> output) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (!ready.ok()) {
                if (!daemon.isAlive()) {
                    throw new AssertionError(what + " exited with " + daemon.exitValue() + "; the end of its output:\n"
                            + output.get());
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(what + " was not ready within " + timeout.toSeconds()
                            + " s; the end of its output:\n" + output.get());
                }
                Thread.sleep(20);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + what, e);
        }
    }

    /** Stops a daemon as its service would (SIGTERM); kills it and fails when it outlives {@code timeout}. */
    public static void stop(Process daemon, String what, Duration timeout) {
        if (daemon == null || !daemon.isAlive()) {
            return;
        }
        try {
            daemon.destroy();
            if (!daemon.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                daemon.destroyForcibly();
                daemon.waitFor(REAP.toSeconds(), TimeUnit.SECONDS);
                throw new AssertionError(what + " did not stop within " + timeout.toSeconds() + " s of SIGTERM; killed it");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            daemon.destroyForcibly();
            throw new AssertionError("interrupted while stopping " + what, e);
        }
    }

    /** Processes other than this one whose command line names {@code dir}: a fixture's daemons, or what they left. */
    public static List<ProcessHandle> naming(Path dir) {
        String mark = dir.toString();
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses().filter(ph -> ph.pid() != self)
                .filter(ph -> ph.info().commandLine().map(c -> c.contains(mark)).orElse(false)).toList();
    }

    /**
     * Kills {@code left}, waits until they are gone, and fails naming them: a fixture that stopped
     * cleanly leaves nothing. Nothing to kill: returns.
     */
    public static void killLeftovers(Collection<ProcessHandle> left, String whose) {
        if (left.isEmpty()) {
            return;
        }
        List<String> killed = left.stream().map(ph -> ph.pid() + " " + ph.info().commandLine().orElse("?")).toList();
        left.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle ph : left) {
            ph.onExit().orTimeout(REAP.toSeconds(), TimeUnit.SECONDS).exceptionally(t -> ph).join();
        }
        throw new AssertionError("processes of " + whose + " were still running after it stopped; killed " + killed);
    }

    /** The last 30 lines of a log, for failure messages. */
    public static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
