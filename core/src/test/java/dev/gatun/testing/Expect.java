package dev.gatun.testing;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Asserts that a call throws a given type, and hands back the exception for further checks:
 * AssertJ's catchThrowableOfType, which fails on another type, made to fail when nothing is
 * thrown too (it returns null then).
 */
public final class Expect {

    private Expect() {}

    public static <T extends Throwable> T thrown(Class<T> type, ThrowingCallable call) {
        T caught = catchThrowableOfType(type, call);
        assertThat(caught).as("expected the call to throw %s, but it returned normally", type.getName()).isNotNull();
        return caught;
    }
}
