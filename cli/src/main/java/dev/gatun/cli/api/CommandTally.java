package dev.gatun.cli.api;

import java.util.concurrent.atomic.LongAdder;

/**
 * How many commands a serve ran for its clients (command lines, CNI and netavark calls, from
 * either socket) and how many of them exited other than 0: said once, when it stops, so that a
 * stop in the journal tells what the serve did without a line per request.
 */
public final class CommandTally {

    private final LongAdder ran = new LongAdder();
    private final LongAdder exitedOtherThanZero = new LongAdder();

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

    /** "ran 3 commands for clients, 1 of them exited other than 0". */
    public String sentence() {
        long n = ran();
        return "ran " + n + (n == 1 ? " command" : " commands") + " for clients, " + exitedOtherThanZero()
                + " of them exited other than 0";
    }
}
