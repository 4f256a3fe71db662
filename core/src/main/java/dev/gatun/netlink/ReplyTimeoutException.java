package dev.gatun.netlink;

import dev.gatun.RetryableException;
import dev.gatun.bindings.internal.libc_h;

import java.time.Duration;

/**
 * The kernel sent no reply within the socket's timeout. The request may still have been
 * applied: read the state again before retrying.
 */
public final class ReplyTimeoutException extends RetryableException {

    public ReplyTimeoutException(String operation, Duration timeout) {
        super(operation, libc_h.EAGAIN, "no reply from the kernel to " + operation + " within "
                + (timeout.toMillisPart() == 0 ? timeout.toSeconds() + " seconds" : timeout.toMillis() + " ms"), true, null);
    }
}
