package dev.gatun.testing;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExpectTest {

    @Test
    void theExceptionOfTheExpectedTypeIsHandedBack() {
        IllegalStateException e = Expect.thrown(IllegalStateException.class, () -> {
            throw new IllegalStateException("the reason");
        });
        assertThat(e).hasMessage("the reason");
    }

    @Test
    void aCallThatReturnsFails() {
        assertThatThrownBy(() -> Expect.thrown(IllegalStateException.class, () -> { }))
                .isInstanceOf(AssertionError.class).hasMessageContaining("returned normally");
    }

    @Test
    void anotherTypeFails() {
        assertThatThrownBy(() -> Expect.thrown(IllegalStateException.class, () -> {
            throw new IllegalArgumentException("other");
        })).isInstanceOf(AssertionError.class).hasMessageContaining("IllegalArgumentException");
    }
}
