package dev.gatun.netns;

import dev.gatun.InvalidInputException;
import dev.gatun.testing.BadInput;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
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
    private static final Path FIFO = fifo();

    private static Path fifo() {
        try {
            Path dir = Files.createTempDirectory("gatun-fifo");
            dir.toFile().deleteOnExit();
            Path fifo = dir.resolve("netns");
            Process p = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
            if (p.waitFor() != 0) {
                throw new IllegalStateException("mkfifo " + fifo + " failed");
            }
            fifo.toFile().deleteOnExit();
            return fifo;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

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
                BadInput.of("a FIFO (its open must not wait for a writer)", () -> NetworkNamespace.at(FIFO),
                        FIFO.toString(), "not a network namespace"),
                BadInput.of("a namespace of another kind", () -> NetworkNamespace.at(Path.of("/proc/self/ns/uts")),
                        "/proc/self/ns/uts", "not a network namespace"),
                BadInput.of("deleting a name never made", () -> NamedNamespaces.delete("gatun-never-made"),
                        "gatun-never-made"),
                // Half a UTF-16 pair: no file-name encoding holds it (a fuzzed API body found it as a 500).
                BadInput.of("a name no file name can hold", () -> NetworkNamespace.of("ns\uD800x"), "ns\uD800x",
                        "cannot be a file name"),
                BadInput.of("a path no file name can hold", () -> NetworkNamespace.of("/run/netns/\uDC00"),
                        "/run/netns/\uDC00", "cannot be a path"),
                BadInput.of("a path with a NUL, as text", () -> NetworkNamespace.fileOf("/run/netns/a\u0000b"),
                        "cannot be a path"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInput")
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void badInputIsRefusedNamingTheValue(BadInput bad) {
        bad.assertRefusedWith(InvalidInputException.class);
        assertThat(Files.exists(Path.of("/run/etc"))).as("nothing made outside /run/netns").isFalse();
    }
}
