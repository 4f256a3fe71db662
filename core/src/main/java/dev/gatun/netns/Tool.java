package dev.gatun.netns;

import dev.gatun.GatunException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs an external tool: arguments as an array (never a shell), inside the host namespace
 * (through nsenter when it is not this process's own), with a timeout, stderr kept for the error.
 */
public final class Tool {

    /** How long a tool's output may stay open after it exited. */
    private static final int OUTPUT_SECONDS = 10;

    public record Result(int exitCode, String stdout, String stderr) {}

    private final NetworkNamespace namespace;
    private final List<String> searchPath;
    private final Duration timeout;
    private final Map<String, String> environment;

    public Tool(NetworkNamespace namespace, String searchPath, Duration timeout) {
        this(namespace, searchPath, timeout, Map.of());
    }

    /** {@code environment}: variables set for the program on top of this process's own. */
    public Tool(NetworkNamespace namespace, String searchPath, Duration timeout, Map<String, String> environment) {
        this.namespace = namespace;
        this.searchPath = List.of(searchPath.split(":"));
        this.timeout = timeout;
        this.environment = Map.copyOf(environment);
    }

    public NetworkNamespace namespace() {
        return namespace;
    }

    /** The absolute path of a program on the search path, or null. */
    public String find(String program) {
        for (String dir : searchPath) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, program);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }

    /** Runs the program; a non-zero exit is returned, not thrown. */
    public Result run(String program, List<String> args, String stdin) {
        String exe = find(program);
        if (exe == null) {
            throw new GatunException(program + " is not installed (searched " + String.join(":", searchPath) + ")");
        }
        List<String> cmd = new ArrayList<>();
        if (!namespace.isCurrent()) {
            String nsenter = find("nsenter");
            if (nsenter == null) {
                throw new GatunException("nsenter (util-linux) is needed to run " + program + " in " + namespace.describe());
            }
            cmd.add(nsenter);
            cmd.add("--net=" + namespace.path());
            cmd.add("--");
        }
        cmd.add(exe);
        cmd.addAll(args);
        String described = program + " " + String.join(" ", args);
        try {
            ProcessBuilder builder = new ProcessBuilder(cmd);
            builder.environment().putAll(environment);
            Process p = builder.start();
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new GatunException(described + " did not finish within " + timeout.toSeconds() + " seconds");
            }
            // The pipes close with the process, unless a child it left behind still holds them.
            return new Result(p.exitValue(), out.get(OUTPUT_SECONDS, TimeUnit.SECONDS), err.get(OUTPUT_SECONDS, TimeUnit.SECONDS));
        } catch (TimeoutException e) {
            throw new GatunException(described + " exited, but its output stayed open for " + OUTPUT_SECONDS
                    + " seconds (a process it started still holds it)", e);
        } catch (ExecutionException e) {
            throw new GatunException("cannot read the output of " + described + ": " + e.getCause(), e.getCause());
        } catch (IOException e) {
            throw new GatunException("cannot run " + described + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GatunException("interrupted while running " + described, e);
        }
    }

    /** Runs the program and fails, carrying its stderr, unless it exits 0. */
    public String check(String program, List<String> args, String stdin, String operation) {
        Result r = run(program, args, stdin);
        if (r.exitCode() != 0) {
            throw new GatunException(operation + ": " + program + " exited " + r.exitCode() + ": " + r.stderr().strip());
        }
        return r.stdout();
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }, r -> Thread.ofVirtual().start(r));
    }
}
