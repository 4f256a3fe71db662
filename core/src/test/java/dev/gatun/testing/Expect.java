package dev.gatun.testing;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Asserts that a call throws a given type, and hands back the exception for further checks. */
public final class Expect {

    private Expect() {}

    public static <T extends Throwable> T thrown(Class<T> type, ThrowingCallable call) {
        Throwable[] caught = {null};
        assertThatThrownBy(() -> {
            try {
                call.call();
            } catch (Throwable t) {
                caught[0] = t;
                throw t;
            }
        }).isInstanceOf(type);
        return type.cast(caught[0]);
    }
}
