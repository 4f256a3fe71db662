package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.Streams;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The real ./gatun launcher, run as a person runs it: one-shot commands here, the long-running
 * {@code serve} in {@link GatunServe}. Knows nothing of the CLI's classes. Used by CliIT too.
 */
public final class GatunCli {

    /** How long a command's output may stay open after it exited (a child it left may hold it). */
    private static final Duration OUTPUT_OPEN = Duration.ofSeconds(10);

    public static final ObjectMapper JSON = new ObjectMapper();
    /** The checkout: the directory of the launcher, where every command runs. */
    public static final Path ROOT = findRoot();

    /** Told of every command {@link #run} finished, while a test watches ({@link #watch}). */
    private static volatile Consumer<Run> watcher;

    private GatunCli() {}

    /**
     * Has {@code seen} told of every command that {@link #run}, {@link #runWith} or {@link #ok}
     * finishes until the returned handle is closed: a test that must know which commands ran
     * (that each went through a serve, say) without changing the tests that run them.
     */
    public static AutoCloseable watch(Consumer<Run> seen) {
        watcher = seen;
        return () -> watcher = null;
    }

    public record Run(List<String> args, int code, String out, String err) {
        public JsonNode json() {
            try {
                return JSON.readTree(out);
            } catch (IOException e) {
                throw new AssertionError("gatun " + String.join(" ", args) + " printed no JSON: " + out + " / " + err, e);
            }
        }
    }

    private static Path findRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isExecutable(p.resolve("gatun"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new AssertionError("cannot find the gatun launcher above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    public static Path launcher() {
        return ROOT.resolve("gatun");
    }

    public static Run run(String... args) {
        return runWith(Map.of(), args);
    }

    /** {@link #run} with {@code env} added to this process's environment. */
    public static Run runWith(Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(launcher().toString());
        cmd.addAll(List.of(args));
        return runProgram(cmd, env, args);
    }

    /** Runs {@code cmd} (another gatun command: an installed one, say), {@code env} added, stdin closed. */
    public static Run runProgram(List<String> cmd, Map<String, String> env) {
        return runProgram(cmd, env, cmd.subList(1, cmd.size()).toArray(String[]::new));
    }

    private static Run runProgram(List<String> cmd, Map<String, String> env, String... args) {
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd).directory(ROOT.toFile());
            builder.environment().putAll(env);
            Process p = builder.start();
            p.getOutputStream().close();
            CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
            CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("gatun " + String.join(" ", args) + " did not finish within 120 s; stderr: " + err.getNow(""));
            }
            Run run = new Run(List.of(args), p.exitValue(), Bounded.get(out, OUTPUT_OPEN, "stdout after the exit"),
                    Bounded.get(err, OUTPUT_OPEN, "stderr after the exit"));
            Consumer<Run> w = watcher;
            if (w != null) {
                w.accept(run);
            }
            return run;
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** {@link #run}, failing unless it exits 0. */
    public static Run ok(String... args) {
        Run r = run(args);
        if (r.code() != 0) {
            throw new AssertionError("gatun " + String.join(" ", args) + " exited " + r.code()
                    + "\nstdout: " + r.out() + "\nstderr: " + r.err());
        }
        return r;
    }

    /** {@code gatun --netns NS --json ls}: every mapping, as a JSON array. */
    public static JsonNode mappings(String ns) {
        return ok("--netns", ns, "--json", "ls").json();
    }

    /** {@code gatun --netns NS --json net ls}: every network, as a JSON array. */
    public static JsonNode networks(String ns) {
        return ok("--netns", ns, "--json", "net", "ls").json();
    }

    /** The mappings whose owner is {@code owner}. */
    public static List<JsonNode> mappingsOf(String ns, String owner) {
        List<JsonNode> mine = new ArrayList<>();
        for (JsonNode m : mappings(ns)) {
            if (owner.equals(m.path("owner").asText(null))) {
                mine.add(m);
            }
        }
        return mine;
    }

}
