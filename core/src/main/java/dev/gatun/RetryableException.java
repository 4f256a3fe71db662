package dev.gatun;

/**
 * A failure that may go away when the same work is tried again from a fresh read: another
 * process committed between gatun's read and its commit, the kernel did not answer in time,
 * replies were lost to a full receive buffer, or a dump kept being interrupted by changes.
 * Every other {@link GatunException} is one that retrying will not cure.
 *
 * <p>A lost reply is not a lost commit: when {@link #mayHaveApplied()} is true the kernel may
 * have applied the request, so read the state again before trying anything a second time.
 */
public abstract class RetryableException extends ErrnoException {

    private final boolean mayHaveApplied;

    protected RetryableException(String operation, int errno, String message, boolean mayHaveApplied, Throwable cause) {
        super(operation, errno, message, cause);
        this.mayHaveApplied = mayHaveApplied;
    }

    /**
     * Whether the request may have taken effect although it failed: true when its reply was
     * lost, false when the kernel refused it or only a read failed.
     */
    public boolean mayHaveApplied() {
        return mayHaveApplied;
    }
}
