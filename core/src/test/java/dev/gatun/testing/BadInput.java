package dev.gatun.testing;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * One row of a bad-input table: what is wrong, the call that must refuse it, and the words the
 * refusal must name. Its {@code toString} is {@code what}, so a parameterized test's rows read
 * as sentences.
 */
public record BadInput(String what, ThrowingCallable call, List<String> named) {

    public static BadInput of(String what, ThrowingCallable call, String... named) {
        return new BadInput(what, call, List.of(named));
    }

    /** Runs the call: it must throw {@code type} with a message that names every one of {@link #named}. */
    public void assertRefusedWith(Class<? extends Throwable> type) {
        Throwable refused = catchThrowable(call);
        assertThat(refused).as(what).isInstanceOf(type);
        for (String word : named) {
            assertThat(refused).as(what).hasMessageContaining(word);
        }
    }

    @Override
    public String toString() {
        return what;
    }
}
