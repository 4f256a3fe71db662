package dev.gatun.netlink;

import dev.gatun.ErrnoException;
import dev.gatun.internal.Errno;

/**
 * The kernel answered a netlink request with an error. Carries errno, the operation that the
 * failing message carried (matched by sequence number) and the kernel's extended-ACK text.
 */
public class NetlinkException extends ErrnoException {

    private final String kernelMessage;

    public NetlinkException(String operation, int errno, String kernelMessage) {
        super(operation, errno, format(operation, errno, kernelMessage));
        this.kernelMessage = kernelMessage;
    }

    /** The kernel's extended-ACK message, or null when it sent none. */
    public String kernelMessage() {
        return kernelMessage;
    }

    static String format(String operation, int errno, String kernelMessage) {
        String s = operation + ": " + Errno.name(errno) + " (" + Errno.describe(errno) + ")";
        return kernelMessage == null || kernelMessage.isEmpty() ? s : s + "; kernel says: " + kernelMessage;
    }
}
