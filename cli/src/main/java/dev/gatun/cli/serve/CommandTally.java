package dev.gatun.cli.serve;

import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;

/**
 * How many commands a serve ran for its clients (command lines, CNI and netavark calls, from
 * either socket) and how many of them exited other than 0: said once, when it stops, so that a
 * stop in the journal tells what the serve did without a line per request. Commands still
 * running then (a stop whose drain ran out of time) are said apart: they are not counted, and
 * may still finish.
 */
public final class CommandTally {

    private final LongAdder ran = new LongAdder();
    private final LongAdder exitedOtherThanZero = new LongAdder();
    private final LongAdder begun = new LongAdder();

    /**
     * Runs {@code command} and counts it with the exit code {@code exitCode} reads from what it
     * returns: from its start until then it is running. A command that throws ran and failed: it
     * is counted as one that exited other than 0.
     */
    <T> T running(Supplier<T> command, ToIntFunction<T> exitCode) {
        begun.increment();
        T result;
        try {
            result = command.get();
        } catch (RuntimeException | Error e) {
            count(1);
            throw e;
        }
        count(exitCode.applyAsInt(result));
        return result;
    }

    /** Counts one command that exited with {@code exitCode}: the run first, so that "of them" never exceeds it. */
    private void count(int exitCode) {
        ran.increment();
        if (exitCode != 0) {
            exitedOtherThanZero.increment();
        }
    }

    public long ran() {
        return ran.sum();
    }

    public long exitedOtherThanZero() {
        return exitedOtherThanZero.sum();
    }

    /** Commands begun and not counted yet. */
    public long stillRunning() {
        return stillRunning(ran.sum());
    }

    /**
     * Those still running when {@code ranSoFar} was read: the runs are read before the begun, so
     * a command that begins and ends in between shows as running, never as a negative count.
     */
    private long stillRunning(long ranSoFar) {
        return Math.max(0, begun.sum() - ranSoFar);
    }

    /** "ran 3 commands for clients, 1 of them exited other than 0", and "; 2 still running, not counted" when some are. */
    public String sentence() {
        // The failures before the runs, the runs before the begun: each count read covers the one before it.
        long failed = exitedOtherThanZero();
        long n = ran();
        long running = stillRunning(n);
        return "ran " + n + (n == 1 ? " command" : " commands") + " for clients, " + failed
                + " of them exited other than 0" + (running == 0 ? "" : "; " + running + " still running, not counted");
    }
}
