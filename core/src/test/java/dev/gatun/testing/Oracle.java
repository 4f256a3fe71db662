package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns.name()));
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

    public static Result run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).start();
            p.getOutputStream().close();
            var out = p.getInputStream().readAllBytes();
            var err = p.getErrorStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + command);
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + command + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted running " + command, e);
        }
    }
}
