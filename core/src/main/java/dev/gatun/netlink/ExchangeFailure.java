package dev.gatun.netlink;

import dev.gatun.PrivilegeException;
import dev.gatun.bindings.internal.libc_h;

import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/** The first error of an exchange, by position; later ones are counted. */
final class ExchangeFailure {

    int index = -1;
    int errno;
    ExtendedAck ack = ExtendedAck.NONE;
    int others;

    void record(int at, int errno, ExtendedAck ack) {
        if (index < 0 || at < index) {
            if (index >= 0) {
                others++;
            }
            index = at;
            this.errno = errno;
            this.ack = ack == null ? ExtendedAck.NONE : ack;
        } else {
            others++;
        }
    }

    /**
     * The exception for the first failure; {@code where} names the socket's namespace,
     * {@code request} is the message that failed, or null.
     */
    RuntimeException exception(String operation, String where, NetlinkProtocol protocol, MemorySegment request) {
        String later = others == 0 ? "" : " (and " + others + " later operations failed too)";
        if (errno == libc_h.EPERM || errno == libc_h.EACCES) {
            // One sentence about privilege, but with the kernel's own words: EPERM has other causes too.
            return new PrivilegeException(operation + where + later, errno, ack.message());
        }
        return new NetlinkException(operation + later, operation + where + later, errno, ack.message(),
                rejection(protocol, request));
    }

    /**
     * Which attribute the kernel rejected or missed, named from the request that was sent when
     * first asked for, from a copy (by then the request's buffer may be reused or freed); null when it
     * did not say.
     */
    private Supplier<String> rejection(NetlinkProtocol of, MemorySegment request) {
        ExtendedAck said = ack;
        MemorySegment sent = null;
        if (said.hasOffset() && request != null) {
            // A long[] copy: the bindings' layouts read the header's ints aligned.
            sent = MemorySegment.ofArray(new long[(int) ((request.byteSize() + 7) / 8)]).copyFrom(request);
        }
        MemorySegment copy = sent;
        return () -> {
            String rejected = null;
            if (said.hasOffset()) {
                String unnamed = "the attribute at byte " + said.offset() + " of the request";
                try {
                    rejected = copy == null ? unnamed : RejectedAttribute.describe(of, copy, said.offset());
                } catch (RuntimeException e) {
                    rejected = unnamed; // asked for while an error is reported: naming must not fail it
                }
            }
            if (said.missingType() >= 0) {
                String missing = "a missing attribute of type " + said.missingType();
                rejected = rejected == null ? missing : missing + " in " + rejected;
            }
            return rejected;
        };
    }
}
