package dev.gatun.netns;

import dev.gatun.InvalidInputException;
import dev.gatun.testing.BadInput;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Names and paths that are not a network namespace are refused before anything is created or
 * entered, so no root: one row per value, and the refusal names it.
 */
class NamespaceInputChecksTest {

    private static final String LONG_NAME = "n".repeat(256);

    static Stream<BadInput> badInput() {
        return Stream.of(
                BadInput.of("a name with a slash", () -> NetworkNamespace.named("a/b"), "'a/b'"),
                BadInput.of("the name ..", () -> NetworkNamespace.named(".."), "'..'"),
                BadInput.of("a name that climbs out of /run/netns", () -> NamedNamespaces.create("../etc"), "'../etc'"),
                BadInput.of("a name of 256 bytes", () -> NamedNamespaces.create(LONG_NAME),
                        LONG_NAME, "256 bytes", "255"),
                BadInput.of("a path that does not exist", () -> NetworkNamespace.at(Path.of("/proc/999999999/ns/net")),
                        "/proc/999999999/ns/net", "does not exist"),
                BadInput.of("a name never made", () -> NetworkNamespace.named("gatun-no-such-namespace"),
                        "gatun-no-such-namespace", "does not exist"),
                BadInput.of("a file that is no namespace", () -> NetworkNamespace.at(Path.of("/etc/hostname")),
                        "/etc/hostname", "not a network namespace"),
                BadInput.of("a namespace of another kind", () -> NetworkNamespace.at(Path.of("/proc/self/ns/uts")),
                        "/proc/self/ns/uts", "not a network namespace"),
                BadInput.of("deleting a name never made", () -> NamedNamespaces.delete("gatun-never-made"),
                        "gatun-never-made"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void badInputIsRefusedNamingTheValue(BadInput bad) {
        bad.assertRefusedWith(InvalidInputException.class);
        assertThat(Files.exists(Path.of("/run/etc"))).as("nothing made outside /run/netns").isFalse();
    }
}
