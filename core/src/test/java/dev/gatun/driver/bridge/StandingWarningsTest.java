package dev.gatun.driver.bridge;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class StandingWarningsTest {

    @Test
    void aWarningIsGivenWhenItAppearsAndAgainOnlyAfterItWent() {
        StandingWarnings w = new StandingWarnings();
        assertThat(w.fresh(List.of("a", "b", "a"))).as("first seen, once each").containsExactly("a", "b");
        assertThat(w.fresh(List.of("b", "a"))).as("both still standing").isEmpty();
        assertThat(w.fresh(List.of("b"))).as("a went").isEmpty();
        assertThat(w.fresh(List.of("a", "b", "c"))).as("a came back, c is new").containsExactly("a", "c");
        assertThat(w.fresh(List.of())).isEmpty();
        assertThat(w.fresh(List.of("c"))).as("after nothing stood").containsExactly("c");
    }
}
