package dev.gatun.bench;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

class RoundOrdersTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5, 7, 8, 9})
    void everyRoundTakesEveryToolOnce(int tools) {
        int[] all = IntStream.range(0, tools).toArray();
        for (int[] round : RoundOrders.cycle(tools)) {
            assertThat(Arrays.stream(round).sorted().toArray()).containsExactly(all);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 7, 8, 9})
    void everyToolFollowsEveryOtherEquallyOften(int tools) {
        List<int[]> cycle = RoundOrders.cycle(tools);
        int[][] follows = new int[tools][tools];
        for (int[] round : cycle) {
            for (int j = 1; j < tools; j++) {
                follows[round[j - 1]][round[j]]++;
            }
        }
        int expected = tools % 2 == 0 ? 1 : 2;
        for (int a = 0; a < tools; a++) {
            for (int b = 0; b < tools; b++) {
                assertThat(follows[a][b]).as("%d right after %d", b, a).isEqualTo(a == b ? 0 : expected);
            }
        }
        // Each tool also opens a round equally often: whatever ran before the round is spread too.
        int[] opens = new int[tools];
        cycle.forEach(round -> opens[round[0]]++);
        assertThat(opens).containsOnly(cycle.size() / tools);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7, 8, 31, 32})
    void roundsComeInWholeCycles(int wanted) {
        assertThat(RoundOrders.rounds(wanted, 8)).isGreaterThanOrEqualTo(wanted).isLessThan(wanted + 8)
                .matches(r -> r % 8 == 0);
        assertThat(RoundOrders.rounds(wanted, 3) % 6).isZero();
    }
}
