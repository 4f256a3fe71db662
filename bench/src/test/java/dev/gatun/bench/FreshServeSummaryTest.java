package dev.gatun.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class FreshServeSummaryTest {

    /** A serve's 200 publishes: all at {@code warm} but the 10th and the 100th. */
    private static FreshServe.Run run(long warm, long tenth, long hundredth) {
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            micros.add(i == 9 ? tenth : i == 99 ? hundredth : warm);
        }
        return new FreshServe.Run(micros, warm, 1000, 2000, 3000, List.of());
    }

    @Test
    void oneServeWhoseTenthAYoungCollectionHitDoesNotDecideTheVerdict() {
        // Tenths at 1.1x, 3.2x and 1.5x of their own serves' warm figures: the median is 1.5x.
        Map<String, Object> m = FreshServe.summary(32, 200, List.of(run(400, 440, 400), run(350, 1120, 350),
                run(300, 450, 330)));
        assertThat(m.get("serves")).isEqualTo(3);
        assertThat(m.get("tenth_over_warm")).isEqualTo(1.5);
        assertThat(m.get("tenth_over_warm_each")).isEqualTo(List.of(1.1, 3.2, 1.5));
        assertThat(m.get("tenth_met")).isEqualTo(true);
        assertThat(m.get("tenth_us")).isEqualTo(450L);
        assertThat(m.get("warm_us")).isEqualTo(350L);
        // Hundredths at 1.0x, 1.0x and 1.1x.
        assertThat(m.get("hundredth_over_warm")).isEqualTo(1.0);
        assertThat(m.get("hundredth_met")).isEqualTo(true);
    }

    @Test
    void twoServesOfThreeOverTheTargetFailIt() {
        Map<String, Object> m = FreshServe.summary(1, 200, List.of(run(100, 250, 140), run(100, 120, 135),
                run(100, 210, 100)));
        assertThat(m.get("tenth_over_warm")).isEqualTo(2.1);
        assertThat(m.get("tenth_met")).isEqualTo(false);
        assertThat(m.get("hundredth_over_warm")).isEqualTo(1.35);
        assertThat(m.get("hundredth_met")).isEqualTo(false);
    }

    @Test
    void anEvenNumberOfServesTakesTheMiddleTwo() {
        Map<String, Object> m = FreshServe.summary(1, 200, List.of(run(100, 120, 100), run(100, 180, 100)));
        assertThat(m.get("tenth_over_warm")).isEqualTo(1.5);
        assertThat(m.get("tenth_us")).isEqualTo(150L);
    }
}
