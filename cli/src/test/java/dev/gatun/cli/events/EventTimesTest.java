package dev.gatun.cli.events;

import dev.gatun.InvalidInputException;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EventTimesTest {

    private static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");

    @Test
    void aTimeAgoAnInstantSecondsSinceTheEpochAndNow() {
        assertThat(EventTimes.parse("--since", "90s", NOW)).isEqualTo(Instant.parse("2026-12-02T11:58:30Z"));
        assertThat(EventTimes.parse("--since", "10m", NOW)).isEqualTo(Instant.parse("2026-12-02T11:50:00Z"));
        assertThat(EventTimes.parse("--since", "2h", NOW)).isEqualTo(Instant.parse("2026-12-02T10:00:00Z"));
        assertThat(EventTimes.parse("--since", "1d", NOW)).isEqualTo(Instant.parse("2026-12-01T12:00:00Z"));
        assertThat(EventTimes.parse("--since", "250ms", NOW)).isEqualTo(Instant.parse("2026-12-02T11:59:59.750Z"));
        assertThat(EventTimes.parse("--since", "2026-12-02T09:30:00Z", NOW)).isEqualTo(Instant.parse("2026-12-02T09:30:00Z"));
        assertThat(EventTimes.parse("--since", "1764709200", NOW)).isEqualTo(Instant.ofEpochSecond(1764709200L));
        assertThat(EventTimes.parse("--since", "1764709200.5", NOW)).isEqualTo(Instant.ofEpochSecond(1764709200L, 500_000_000));
        assertThat(EventTimes.parse("--until", "now", NOW)).isEqualTo(NOW);
    }

    @Test
    void anythingElseIsRefusedNamingTheOptionAndTheValue() {
        for (String bad : new String[]{"yesterday", "10 m", "-5m", "10y", "", "2026-13-01T00:00:00Z"}) {
            assertThatThrownBy(() -> EventTimes.parse("--since", bad, NOW)).isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("--since " + bad + " is not a time");
        }
    }
}
