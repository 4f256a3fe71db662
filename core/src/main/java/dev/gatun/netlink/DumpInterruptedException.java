package dev.gatun.netlink;

import dev.gatun.RetryableException;
import dev.gatun.bindings.internal.libc_h;

/**
 * A dump could not be read consistently, however often it was read again: the kernel marked
 * it interrupted (NLM_F_DUMP_INTR) or it repeated entries, because the data kept changing.
 * Nothing was changed; read again later.
 */
public final class DumpInterruptedException extends RetryableException {

    public DumpInterruptedException(String operation, String why) {
        super(operation, libc_h.EINTR, operation + ": " + why, false, null);
    }
}
