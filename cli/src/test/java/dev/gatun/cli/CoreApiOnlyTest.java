package dev.gatun.cli;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command and the engine adapters use core's API only: none of its internal packages and
 * none of the generated bindings, which stay core's to change.
 */
class CoreApiOnlyTest {

    private static final Pattern INTERNAL = Pattern.compile("(?m)^import (static )?(dev\\.gatun\\.(\\w+\\.)*internal\\.[\\w.*]+);");

    @Test
    void noSourceOfTheCliImportsAnInternalPackage() throws IOException {
        Path sources = Path.of("src/main/java");
        assertThat(sources).isDirectory();
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(sources)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = INTERNAL.matcher(Files.readString(f));
                while (m.find()) {
                    found.add(sources.relativize(f) + ": " + m.group(2));
                }
            }
        }
        assertThat(found).isEmpty();
    }
}
