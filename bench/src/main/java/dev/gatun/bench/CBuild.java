package dev.gatun.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds the C reference from bench/src/main/c with gcc, against the installed libnftnl and libmnl. */
final class CBuild {

    private CBuild() {}

    static Path build(Path root) throws IOException, InterruptedException {
        Path source = root.resolve("bench/src/main/c/publish_ref.c");
        if (!Files.exists(source)) {
            throw new IllegalStateException("cannot find " + source + " (set GATUN_HOME to the repository)");
        }
        Path dir = root.resolve("bench/target");
        Files.createDirectories(dir);
        Path binary = dir.resolve("publish_ref");
        Process p = new ProcessBuilder("gcc", "-O2", "-o", binary.toString(), source.toString(), "-lnftnl", "-lmnl")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("gcc could not build the C reference (needs libnftnl-dev and libmnl-dev):\n" + out);
        }
        return binary;
    }
}
