package dev.gatun.netlink;

import dev.gatun.RetryableException;
import dev.gatun.bindings.internal.libc_h;

/**
 * Replies overran the socket's receive buffer and some were lost (ENOBUFS). Whether the
 * request was applied is not known: read the state again before retrying.
 */
public final class ReplyOverrunException extends RetryableException {

    public ReplyOverrunException(String operation) {
        super(operation, libc_h.ENOBUFS, "replies to " + operation
                + " overran the socket's receive buffer and some were lost (ENOBUFS)", true, null);
    }
}
