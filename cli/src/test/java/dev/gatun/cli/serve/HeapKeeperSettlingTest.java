package dev.gatun.cli.serve;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When the start's one full collection falls due: {@link HeapKeeper.Settling}, fed CPU ticks period by period. */
class HeapKeeperSettlingTest {

    @Test
    void dueOnceWhenCompilersAndTheRestWereQuietForTwoPeriodsInARow() {
        HeapKeeper.Settling s = new HeapKeeper.Settling();
        assertThat(s.settledAfter(500, 900)).as("the first reading has nothing to compare with").isFalse();
        assertThat(s.settledAfter(540, 905)).as("the compilers were busy").isFalse();
        assertThat(s.settledAfter(541, 906)).as("one quiet period").isFalse();
        assertThat(s.settledAfter(541, 910)).as("the second in a row").isTrue();
        assertThat(s.done()).isTrue();
        assertThat(s.settledAfter(541, 910)).as("never twice").isFalse();
    }

    @Test
    void busyRequestsOrCompilersStartTheCountAgain() {
        HeapKeeper.Settling s = new HeapKeeper.Settling();
        s.settledAfter(100, 100);
        assertThat(s.settledAfter(100, 101)).isFalse();
        assertThat(s.settledAfter(100, 140)).as("requests: the rest used 39 ticks").isFalse();
        assertThat(s.settledAfter(100, 141)).isFalse();
        assertThat(s.settledAfter(103, 142)).as("the compilers used 3 ticks").isFalse();
        assertThat(s.settledAfter(103, 142)).isFalse();
        assertThat(s.settledAfter(104, 142)).isTrue();
    }

    @Test
    void aServeBusyThroughTheWholeWaitSkipsTheCollection() {
        HeapKeeper.Settling s = new HeapKeeper.Settling();
        for (int period = 0; period < 59; period++) {
            assertThat(s.settledAfter(period * 50L, period * 50L)).isFalse();
            assertThat(s.done()).as("period %d", period).isFalse();
        }
        assertThat(s.settledAfter(59 * 50L, 59 * 50L)).isFalse();
        assertThat(s.done()).as("the 60th period ends the wait").isTrue();
        assertThat(s.settledAfter(59 * 50L, 59 * 50L)).isFalse();
        assertThat(s.settledAfter(59 * 50L, 59 * 50L)).as("quiet too late: skipped for good").isFalse();
    }

    @Test
    void unreadableTicksAreNeverQuiet() {
        HeapKeeper.Settling s = new HeapKeeper.Settling();
        for (int period = 0; period < 10; period++) {
            assertThat(s.settledAfter(-1, -1)).isFalse();
        }
        assertThat(s.done()).isFalse();
    }
}
