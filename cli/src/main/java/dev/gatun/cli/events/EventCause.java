package dev.gatun.cli.events;

import java.util.function.Supplier;

/**
 * Who asked for the change being made on this thread: the serve's entry point and its request
 * ("gatun publish n1 ... (local API)", "CNI ADD c1", "dockerd: container start abc"). The
 * driver tells of its commits on the committing thread, so the event log reads it there.
 */
public final class EventCause {

    private static final ScopedValue<String> CURRENT = ScopedValue.newInstance();

    private EventCause() {
    }

    /** Runs {@code work} with {@code cause} as the cause of whatever it changes. */
    public static <T> T as(String cause, Supplier<T> work) {
        return ScopedValue.where(CURRENT, cause).call(work::get);
    }

    public static void as(String cause, Runnable work) {
        ScopedValue.where(CURRENT, cause).run(work);
    }

    /** The cause on this thread, or "gatun serve" (its own start or repair) when none was given. */
    static String current() {
        return CURRENT.orElse("gatun serve");
    }
}
