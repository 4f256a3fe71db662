package dev.gatun.cli.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.TimeUnit;

/**
 * The installed serve's ahead-of-time cache, made by install. The launcher trains it before a
 * serve whose cache is missing or older than the jar, but only where it may write PREFIX/lib/gatun:
 * gatun.service runs the serve with ProtectSystem=full, which makes /usr read-only to it, so a
 * serve started by systemd would never have one. Install runs as root outside that sandbox.
 */
public final class ServeCache {

    /** The training serves a throwaway namespace through its warm-up: seconds; a minute is plenty. */
    private static final long LIMIT_SECONDS = 120;

    private ServeCache() {
    }

    public static Path of(Installation.Target to) {
        return to.home().resolve("gatun-serve.aot");
    }

    /**
     * Has the installed launcher make the cache if it lacks a current one: it trains before any
     * serve command, and {@code serve --help} then ends at once. Returns the step ("trained" or
     * "unchanged"), or null when no cache is there afterwards (not root, no nf_tables here, the
     * training failed): the serve then starts without one, as before.
     */
    public static Installation.Step train(Installation.Target to) {
        Path cache = of(to);
        FileTime before = modified(cache);
        ProcessBuilder pb = new ProcessBuilder(to.home().resolve("gatun").toString(), "serve", "--help")
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectErrorStream(true);
        // The training's serve must not tell a systemd that started install that it is ready.
        pb.environment().remove("NOTIFY_SOCKET");
        try {
            Process p = pb.start();
            if (!p.waitFor(LIMIT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        FileTime after = modified(cache);
        if (after == null) {
            return null;
        }
        return new Installation.Step(after.equals(before) ? "unchanged" : "trained", cache);
    }

    private static FileTime modified(Path p) {
        try {
            return Files.getLastModifiedTime(p);
        } catch (IOException e) {
            return null;
        }
    }
}
