package dev.gatun.netns;

import dev.gatun.InvalidInputException;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Names and paths that are not a network namespace are refused before anything is created or
 * entered, so no root: one row per value, and the refusal names it.
 */
class NamespaceInputChecksTest {

    private static final String LONG_NAME = "n".repeat(256);

    record Bad(String what, ThrowingCallable call, List<String> named) {
        @Override
        public String toString() {
            return what;
        }
    }

    static Stream<Bad> badInput() {
        return Stream.of(
                new Bad("a name with a slash", () -> NetworkNamespace.named("a/b"), List.of("'a/b'")),
                new Bad("the name ..", () -> NetworkNamespace.named(".."), List.of("'..'")),
                new Bad("a name that climbs out of /run/netns", () -> NamedNamespaces.create("../etc"),
                        List.of("'../etc'")),
                new Bad("a name of 256 bytes", () -> NamedNamespaces.create(LONG_NAME),
                        List.of(LONG_NAME, "256 bytes", "255")),
                new Bad("a path that does not exist", () -> NetworkNamespace.at(Path.of("/proc/999999999/ns/net")),
                        List.of("/proc/999999999/ns/net", "does not exist")),
                new Bad("a name never made", () -> NetworkNamespace.named("gatun-no-such-namespace"),
                        List.of("gatun-no-such-namespace", "does not exist")),
                new Bad("a file that is no namespace", () -> NetworkNamespace.at(Path.of("/etc/hostname")),
                        List.of("/etc/hostname", "not a network namespace")),
                new Bad("a namespace of another kind", () -> NetworkNamespace.at(Path.of("/proc/self/ns/uts")),
                        List.of("/proc/self/ns/uts", "not a network namespace")),
                new Bad("deleting a name never made", () -> NamedNamespaces.delete("gatun-never-made"),
                        List.of("gatun-never-made")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    void badInputIsRefusedNamingTheValue(Bad bad) {
        Throwable refused = catchThrowable(bad.call());
        assertThat(refused).isInstanceOf(InvalidInputException.class);
        for (String named : bad.named()) {
            assertThat(refused).hasMessageContaining(named);
        }
        assertThat(Files.exists(Path.of("/run/etc"))).as("nothing made outside /run/netns").isFalse();
    }
}
