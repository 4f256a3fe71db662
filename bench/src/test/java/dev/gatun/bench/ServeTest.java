package dev.gatun.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the harness reads a serve: its ready line, the count of commands in the line it logs when
 * it stops, and how it stops. A shell script stands in for the serve (no root, no JVM): it
 * creates its "socket", prints the ready line, and on SIGTERM does what it is told, logging as
 * {@code gatun serve} does when it stops. The served tool's numbers are only reported when every
 * one of its commands is in that count, so the counting must not be fooled.
 */
class ServeTest {

    private static final String STOPPED = "12:00:00.000 gatun serve: stopping; the kernel keeps every network, endpoint"
            + " and port; ";

    /** A stand-in serve: creates {@code socket}, prints {@code log} on stderr, says ready, then runs {@code onTerm} on SIGTERM. */
    private static Serve fake(Path socket, String log, String onTerm) {
        // The log before the ready line: a shell runs its trap between two commands, and the test stops it at once.
        String script = "trap '" + onTerm + "' TERM; : > " + socket + "; printf '" + log + "' >&2; echo 'ready: API on "
                + socket + "'; while :; do sleep 0.05; done";
        Serve s = new Serve(List.of("sh", "-c", script), socket);
        s.awaitReady();
        return s;
    }

    /** What the stand-in does on SIGTERM: removes its socket, logs {@code stopLine} and exits 0. */
    private static String stopsSaying(Path socket, String stopLine) {
        return "rm -f " + socket + "; echo \"" + stopLine + "\" >&2; exit 0";
    }

    @Test
    void countsTheCommandsItSaysItRanAndStopsCleanly(@TempDir Path dir) {
        Path socket = dir.resolve("netns-1.sock");
        try (Serve s = fake(socket, "12:00:00.001 gatun serve: repaired x\\n",
                stopsSaying(socket, STOPPED + "ran 2 commands for clients, 0 of them exited other than 0"))) {
            assertThat(s.stop()).isEqualTo(2);
            assertThat(s.log()).contains("12:00:00.001 gatun serve: repaired x");
            assertThat(socket).doesNotExist();
        }
        Path one = dir.resolve("netns-5.sock");
        try (Serve s = fake(one, "", stopsSaying(one, STOPPED + "ran 1 command for clients, 0 of them exited other than 0"))) {
            assertThat(s.stop()).isEqualTo(1);
        }
        // A drain that ran out of time says the commands still running apart: those it ran are still the count.
        Path late = dir.resolve("netns-7.sock");
        try (Serve s = fake(late, "", stopsSaying(late, STOPPED
                + "ran 3 commands for clients, 0 of them exited other than 0; 1 still running, not counted"))) {
            assertThat(s.stop()).isEqualTo(3);
        }
    }

    @Test
    void failsWhenACommandItRanFailedOrItDoesNotSayHowManyItRan(@TempDir Path dir) {
        Path socket = dir.resolve("netns-2.sock");
        try (Serve s = fake(socket, "", stopsSaying(socket, STOPPED + "ran 2 commands for clients, 1 of them exited other than 0"))) {
            assertThatThrownBy(s::stop).hasMessageContaining("1 of the 2 commands").hasMessageContaining("exited other than 0");
        }
        Path mute = dir.resolve("netns-6.sock");
        // A request log's lines are no count: only the stop line is.
        try (Serve s = fake(mute, "12:00:00.000 gatun serve: ran gatun publish n1 10.88.0.2 -p 1:1: exit 0\\n",
                "rm -f " + mute + "; exit 0")) {
            assertThatThrownBy(s::stop).hasMessageContaining("without saying how many commands it ran");
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
