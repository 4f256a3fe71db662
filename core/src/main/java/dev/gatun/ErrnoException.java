package dev.gatun;

import dev.gatun.internal.Errno;

/** A system call or kernel request failed with an errno; the message names the operation. */
public class ErrnoException extends GatunException {

    private final int errno;
    private final String operation;

    public ErrnoException(String operation, int errno) {
        this(operation, errno, operation + ": " + Errno.name(errno) + " (" + Errno.describe(errno) + ")");
    }

    protected ErrnoException(String operation, int errno, String message) {
        this(operation, errno, message, null);
    }

    protected ErrnoException(String operation, int errno, String message, Throwable cause) {
        super(message, cause);
        this.errno = errno;
        this.operation = operation;
    }

    /** The positive errno value, for example 2 for ENOENT. */
    public int errno() {
        return errno;
    }

    /** The symbolic name of {@link #errno()}, for example "ENOENT". */
    public String errnoName() {
        return Errno.name(errno);
    }

    /**
     * Whether the call failed for want of file descriptors (of the process, EMFILE, or of the
     * system, ENFILE) or of memory (ENOMEM): a shortage that may pass, so the same work may
     * succeed when tried again later.
     */
    public boolean isShortage() {
        return Errno.isShortage(errno);
    }

    /** What gatun was doing, for example "add table ip gatun". */
    public String operation() {
        return operation;
    }
}
