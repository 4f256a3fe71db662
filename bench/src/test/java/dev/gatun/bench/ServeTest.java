package dev.gatun.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the harness reads a serve: its ready line, the commands in its request log, and how it
 * stops. A shell script stands in for the serve (no root, no JVM): it creates its "socket",
 * prints the ready line, logs as {@code gatun serve --log-requests} does, and on SIGTERM does
 * what it is told. The served tool's numbers are only reported when every one of its commands is
 * in that log, so the counting must not be fooled.
 */
class ServeTest {

    private static final String RAN = "12:00:00.000 gatun serve: ran gatun publish n1 10.88.0.2 -p 52001:52001: exit ";

    /** A stand-in serve: creates {@code socket}, prints {@code log} on stderr, says ready, then runs {@code onTerm} on SIGTERM. */
    private static Serve fake(Path socket, String log, String onTerm) {
        // The log before the ready line: a shell runs its trap between two commands, and the test stops it at once.
        String script = "trap '" + onTerm + "' TERM; : > " + socket + "; printf '" + log + "' >&2; echo 'ready: API on "
                + socket + "'; while :; do sleep 0.05; done";
        Serve s = new Serve(List.of("sh", "-c", script), socket);
        s.awaitReady();
        return s;
    }

    @Test
    void countsTheCommandsItRanAndStopsCleanly(@TempDir Path dir) {
        Path socket = dir.resolve("netns-1.sock");
        try (Serve s = fake(socket, RAN + "0\\n" + "12:00:00.001 gatun serve: repaired x\\n" + RAN + "0\\n",
                "rm -f " + socket + "; exit 0")) {
            assertThat(s.stop()).isEqualTo(2);
            assertThat(s.log()).containsExactly("12:00:00.001 gatun serve: repaired x");
            assertThat(socket).doesNotExist();
        }
    }

    @Test
    void failsWhenACommandItRanFailed(@TempDir Path dir) {
        Path socket = dir.resolve("netns-2.sock");
        try (Serve s = fake(socket, RAN + "0\\n" + RAN + "3\\n", "rm -f " + socket + "; exit 0")) {
            assertThatThrownBy(s::stop).hasMessageContaining("commands failed").hasMessageContaining("exit 3");
        }
    }

    @Test
    void failsWhenItExitsOtherThanZeroOrLeavesItsSocket(@TempDir Path dir) {
        Path one = dir.resolve("netns-3.sock");
        try (Serve s = fake(one, "", "rm -f " + one + "; exit 1")) {
            assertThatThrownBy(s::stop).hasMessageContaining("exited 1");
        }
        Path two = dir.resolve("netns-4.sock");
        try (Serve s = fake(two, "", "exit 0")) {
            assertThatThrownBy(s::stop).hasMessageContaining("left " + two);
        }
    }

    @Test
    void failsWhenItStopsBeforeItIsReady(@TempDir Path dir) {
        Serve s = new Serve(List.of("sh", "-c", "echo 'gatun: cannot open the namespace' >&2; exit 4"), dir.resolve("x.sock"));
        try (s) {
            assertThatThrownBy(s::awaitReady).hasMessageContaining("did not get ready")
                    .hasMessageContaining("cannot open the namespace");
        }
    }
}
