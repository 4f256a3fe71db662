package dev.gatun.netlink;

/**
 * A commit guarded by a generation id was refused because the ruleset changed since that id
 * was read (ERESTART). Nothing was applied; read again and retry.
 */
public final class GenerationConflictException extends NetlinkException {

    private final int expectedGeneration;

    public GenerationConflictException(String operation, int errno, int expectedGeneration) {
        super(operation + " (guarded by generation " + Integer.toUnsignedString(expectedGeneration)
                + ", but the ruleset has changed since)", errno, null);
        this.expectedGeneration = expectedGeneration;
    }

    public int expectedGeneration() {
        return expectedGeneration;
    }
}
