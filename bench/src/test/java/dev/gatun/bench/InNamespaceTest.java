package dev.gatun.bench;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(FreshNamespaces.class)
class InNamespaceTest {

    private static Path timer;

    @BeforeAll
    static void build() throws Exception {
        timer = CBuild.timer(Path.of("").toAbsolutePath().getParent());
    }

    @Test
    void runsEachToolInsideTheNamespace(NetworkNamespace ns) throws Exception {
        try (InNamespace inside = new InNamespace(timer, ns.path())) {
            InNamespace.Run r = inside.run(List.of("readlink", "/proc/self/ns/net"), null);
            assertThat(r.output().strip()).isEqualTo("net:[" + Files.getAttribute(ns.path(), "unix:ino") + "]");
        }
    }

    @Test
    void timesTheToolsWholeProcess(NetworkNamespace ns) {
        try (InNamespace inside = new InNamespace(timer, ns.path())) {
            assertThat(inside.time(List.of("sleep", "0.2"), null)).isGreaterThanOrEqualTo(200_000);
        }
    }

    @Test
    void givesInputAndReturnsStatusAndOutput(NetworkNamespace ns) {
        try (InNamespace inside = new InNamespace(timer, ns.path())) {
            InNamespace.Run r = inside.run(List.of("sh", "-c", "cat; echo to-stderr >&2; exit 3"), "to-stdin\n");
            assertThat(r.status()).isEqualTo(3);
            assertThat(r.output()).isEqualTo("to-stdin\nto-stderr\n");
            assertThat(inside.run(List.of("no-such-tool-here"), null).status()).isEqualTo(127);
            assertThat(inside.run(List.of("true"), null).status()).isZero();
        }
    }
}
