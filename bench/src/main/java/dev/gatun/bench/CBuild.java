package dev.gatun.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Builds the bench's C programs from bench/src/main/c with gcc, into bench/target. */
final class CBuild {

    private CBuild() {}

    /** The C floor, against the installed libnftnl and libmnl. */
    static Path build(Path root) throws IOException, InterruptedException {
        return compile(root, "publish_ref", "(needs libnftnl-dev and libmnl-dev)", "-lnftnl", "-lmnl");
    }

    /** run_timed, which runs and times the command-line tools inside their namespace (InNamespace). */
    static Path timer(Path root) throws IOException, InterruptedException {
        return compile(root, "run_timed", "");
    }

    /** serve_timed, which times commands sent to a serve by the C client's own code (FreshServe); it compiles the client's source in. */
    static Path serveTimer(Path root) throws IOException, InterruptedException {
        return compile(root, "serve_timed", "(with cli/src/main/c/gatun-client.c)", "-I" + root.resolve("cli/src/main/c"));
    }

    private static Path compile(Path root, String name, String hint, String... libraries)
            throws IOException, InterruptedException {
        Path source = root.resolve("bench/src/main/c/" + name + ".c");
        if (!Files.exists(source)) {
            throw new IllegalStateException("cannot find " + source + " (set GATUN_HOME to the repository)");
        }
        Path dir = root.resolve("bench/target");
        Files.createDirectories(dir);
        Path binary = dir.resolve(name);
        List<String> cmd = new ArrayList<>(List.of("gcc", "-O2", "-Wall", "-o", binary.toString(), source.toString()));
        cmd.addAll(List.of(libraries));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("gcc did not finish building " + source.getFileName() + " within 5 minutes");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException("gcc could not build " + source.getFileName() + " " + hint + ":\n" + out);
        }
        return binary;
    }
}
