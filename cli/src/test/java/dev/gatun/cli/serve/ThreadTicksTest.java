package dev.gatun.cli.serve;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The /proc/PID/task/TID/stat lines the serve reads its threads' CPU time from (proc(5): utime is field 14, stime 15). */
class ThreadTicksTest {

    /** A line as the kernel writes it for a thread named with spaces and a parenthesis, 1..52 fields. */
    private static String stat(String name, long utime, long stime) {
        StringBuilder b = new StringBuilder("4242 (").append(name).append(") S");
        for (int field = 4; field <= 52; field++) {
            b.append(' ').append(field == 14 ? utime : field == 15 ? stime : field * 1000L);
        }
        return b.append('\n').toString();
    }

    @Test
    void ticksAreUserPlusSystemTime() {
        assertThat(ThreadTicks.ticksOf(stat("C2 CompilerThre", 120, 7))).isEqualTo(127);
        assertThat(ThreadTicks.ticksOf(stat("a (tricky) one", 5, 0))).isEqualTo(5);
    }

    @Test
    void compilerThreadsAreToldByTheirName() {
        assertThat(ThreadTicks.isCompiler(stat("C1 CompilerThre", 1, 1))).isTrue();
        assertThat(ThreadTicks.isCompiler(stat("C2 CompilerThre", 1, 1))).isTrue();
        assertThat(ThreadTicks.isCompiler(stat("gatun-api-12", 1, 1))).isFalse();
        assertThat(ThreadTicks.isCompiler(stat("VM Thread", 1, 1))).isFalse();
    }

    /** Read from this JVM: starting it and these tests took its threads far more than a tick (10 ms). */
    @Test
    void thisJvmsThreadsAreRead() {
        assertThat(ThreadTicks.allButCompilers()).isPositive();
        assertThat(ThreadTicks.compilers()).as("readable, so not -1").isNotNegative();
    }
}
