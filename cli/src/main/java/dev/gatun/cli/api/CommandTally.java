package dev.gatun.cli.api;

import java.util.concurrent.atomic.LongAdder;

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
    private final LongAdder ended = new LongAdder();

    /** Runs {@code command}, said as running until it returns or throws. */
    <T> T running(java.util.function.Supplier<T> command) {
        begun.increment();
        try {
            return command.get();
        } finally {
            ended.increment();
        }
    }

    /** Counts one command that exited with {@code exitCode}. */
    void count(int exitCode) {
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

    /** Commands begun and not yet returned. */
    public long stillRunning() {
        // Ended first: a command that ends between the two reads is then not said to be running.
        long done = ended.sum();
        return Math.max(0, begun.sum() - done);
    }

    /** "ran 3 commands for clients, 1 of them exited other than 0", and "; 2 still running, not counted" when some are. */
    public String sentence() {
        long running = stillRunning();
        long n = ran();
        return "ran " + n + (n == 1 ? " command" : " commands") + " for clients, " + exitedOtherThanZero()
                + " of them exited other than 0" + (running == 0 ? "" : "; " + running + " still running, not counted");
    }
}
