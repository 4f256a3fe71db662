package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the real tools (nft, ip) as independent judges of what gatun did. Commands for a named
 * namespace run through {@code ip netns exec}, exactly as a person would run them.
 */
public final class Oracle {

    private Oracle() {}

    public record Result(int exitCode, String stdout, String stderr) {}

    /** Runs {@code command} inside {@code ns} and returns its stdout; fails the test if it fails. */
    public static String in(NetworkNamespace ns, String... command) {
        Result r = tryIn(ns, command);
        if (r.exitCode != 0) {
            throw new AssertionError(String.join(" ", command) + " in " + ns + " exited " + r.exitCode + ": " + r.stderr);
        }
        return r.stdout;
    }

    public static Result tryIn(NetworkNamespace ns, String... command) {
        // One opened by path (a process's, say) has no name for ip netns exec.
        List<String> cmd = new ArrayList<>(ns.name() == null ? List.of("nsenter", "--net=" + ns.path())
                : List.of("ip", "netns", "exec", ns.name()));
        cmd.addAll(List.of(command));
        return run(cmd);
    }

    /** Feeds {@code script} to {@code nft -f} inside {@code ns}, as a file (nft reads stdin only with -f -). */
    public static Result nftFile(NetworkNamespace ns, String script) {
        try {
            Path f = Files.createTempFile("gatun-oracle", ".nft");
            try {
                Files.writeString(f, script);
                return tryIn(ns, "nft", "-f", f.toString());
            } finally {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot write an nft script: " + e.getMessage(), e);
        }
    }

    /** Feeds {@code commands} to {@code ip -batch} inside {@code ns}, as a file; fails the test if it fails. */
    public static void batch(NetworkNamespace ns, String commands) {
        try {
            Path f = Files.createTempFile("gatun-oracle", ".ip");
            try {
                Files.writeString(f, commands);
                in(ns, "ip", "-batch", f.toString());
            } finally {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot write an ip batch: " + e.getMessage(), e);
        }
    }

    /** Runs a command in the test's own (host) namespace, for read-only looks only. */
    public static String host(String... command) {
        Result r = run(List.of(command));
        if (r.exitCode != 0) {
            throw new AssertionError(String.join(" ", command) + " exited " + r.exitCode + ": " + r.stderr);
        }
        return r.stdout;
    }

    /** How long one tool may run: far above any here (nft lists 100,000 elements in seconds). */
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /**
     * Runs {@code command}; stdout and stderr are drained on threads of their own, so a tool that
     * fills one pipe while the other is read cannot stall, and the whole run is bounded by
     * {@link #TIMEOUT}: a tool that hangs is killed and fails the test naming it and what it said.
     */
    public static Result run(List<String> command) {
        return run(command, TIMEOUT);
    }

    static Result run(List<String> command, Duration timeout) {
        Process p;
        try {
            p = new ProcessBuilder(command).start();
            p.getOutputStream().close();
        } catch (IOException e) {
            throw new AssertionError("cannot run " + command + ": " + e.getMessage(), e);
        }
        CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
        CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(command + " did not finish within " + timeout + "; killed it. stderr: "
                        + err.getNow("(still open)") + " stdout: " + out.getNow("(still open)"));
            }
            // The pipes end with the process unless it left a child holding them: bounded too.
            return new Result(p.exitValue(), out.get(10, TimeUnit.SECONDS), err.get(10, TimeUnit.SECONDS));
        } catch (TimeoutException e) {
            throw new AssertionError(command + " exited but its output stayed open for 10 s (a child of it still holds it)", e);
        } catch (ExecutionException e) {
            throw new AssertionError("cannot read the output of " + command + ": " + e.getCause(), e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted running " + command, e);
        }
    }
}
