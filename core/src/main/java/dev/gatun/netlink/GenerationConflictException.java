package dev.gatun.netlink;

import dev.gatun.RetryableException;
import dev.gatun.bindings.internal.libc_h;

/**
 * A commit guarded by a generation id was refused because the ruleset changed since that id
 * was read (ERESTART), or a caller gave up after several such refusals in a row. Nothing was
 * applied; read again and retry.
 */
public final class GenerationConflictException extends RetryableException {

    private final int expectedGeneration;

    public GenerationConflictException(String operation, int errno, int expectedGeneration) {
        super(operation, errno, NetlinkException.format(operation + " (guarded by generation "
                + Integer.toUnsignedString(expectedGeneration) + ", but the ruleset has changed since)", errno, null),
                false, null);
        this.expectedGeneration = expectedGeneration;
    }

    private GenerationConflictException(String operation, String message, int expectedGeneration,
                                        GenerationConflictException last) {
        super(operation, libc_h.ERESTART, message, false, last);
        this.expectedGeneration = expectedGeneration;
    }

    /**
     * {@code operation} stopped after {@code attempts} reads and guarded commits, each refused
     * because another process committed in between; {@code last} is the last refusal.
     */
    public static GenerationConflictException gaveUp(String operation, int attempts, GenerationConflictException last) {
        return new GenerationConflictException(operation, operation + ": gave up after " + attempts
                + " attempts: other processes kept changing the ruleset between reading and committing",
                last.expectedGeneration, last);
    }

    public int expectedGeneration() {
        return expectedGeneration;
    }
}
