package dev.gatun.cli.testing;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What an engine's lab needs on the machine: commands on PATH and files; skipped without them, failed with CI=true. */
public final class Requirements {

    private Requirements() {}

    /** Skips (or with CI=true fails) naming {@code what} and what is missing, unless every command and file is there. */
    public static void require(String what, List<String> commands, List<Path> files) {
        List<String> missing = new ArrayList<>(commands.stream()
                .filter(t -> Stream.of(System.getenv("PATH").split(":")).noneMatch(d -> Files.isExecutable(Path.of(d, t))))
                .toList());
        files.stream().filter(f -> !Files.exists(f)).forEach(f -> missing.add(f.toString()));
        if (missing.isEmpty()) {
            return;
        }
        String why = what + " (ci/setup installs them); missing: " + missing;
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(why);
        }
        Assumptions.abort(why);
    }
}
