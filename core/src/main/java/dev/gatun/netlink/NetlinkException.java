package dev.gatun.netlink;

import dev.gatun.ErrnoException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.internal.Errno;

import java.util.function.Supplier;

/**
 * The kernel answered a netlink request with an error. Carries errno, the operation that the
 * failing message carried (matched by sequence number), the kernel's extended-ACK text and the
 * attribute of the request it rejected, where it said which.
 */
public class NetlinkException extends ErrnoException {

    private final String named;
    private final String kernelMessage;
    /** Names the rejected attribute when first asked: a caller that handles the errno never needs the name. */
    private transient Supplier<String> rejection;
    private String rejectedAttribute;

    public NetlinkException(String operation, int errno, String kernelMessage) {
        this(operation, errno, kernelMessage, null);
    }

    public NetlinkException(String operation, int errno, String kernelMessage, String rejectedAttribute) {
        this(operation, operation, errno, kernelMessage, rejectedAttribute);
    }

    /**
     * {@code named}: the operation as the message names it, with where it ran ("add table ip t in
     * network namespace a"); {@link #operation} stays the operation alone.
     */
    public NetlinkException(String operation, String named, int errno, String kernelMessage, String rejectedAttribute) {
        this(operation, named, errno, kernelMessage, () -> rejectedAttribute);
    }

    /**
     * As above, with the rejected attribute named by {@code rejection} when the message or the
     * attribute is first asked for: naming it reads every constant of the bindings, which
     * a dump of a set that does not exist yet (every serve's start) would pay for nothing.
     */
    NetlinkException(String operation, String named, int errno, String kernelMessage, Supplier<String> rejection) {
        super(operation, errno, null);
        this.named = named;
        this.kernelMessage = kernelMessage;
        this.rejection = rejection;
    }

    @Override
    public String getMessage() {
        return format(named, errno(), kernelMessage, rejectedAttribute());
    }

    /**
     * Never: this errno is the kernel's answer to a request, not a shortage of the process
     * (nf_tables answers ENFILE when a set is full, which trying again does not cure).
     */
    @Override
    public boolean isShortage() {
        return false;
    }

    /** The kernel's extended-ACK message, or null when it sent none. */
    public String kernelMessage() {
        return kernelMessage;
    }

    /**
     * The attribute of the request the kernel rejected, by type and name, for example
     * "NFTA_CHAIN_TABLE (type 1)"; nested ones by path. Null when the kernel did not say.
     */
    public synchronized String rejectedAttribute() {
        if (rejection != null) {
            rejectedAttribute = rejection.get();
            rejection = null;
        }
        return rejectedAttribute;
    }

    /** The object the request names does not exist (ENOENT). */
    public boolean isNotFound() {
        return errno() == libc_h.ENOENT;
    }

    /** The network device the request names does not exist (ENODEV), rtnetlink's answer for a missing link. */
    public boolean isNoSuchDevice() {
        return errno() == libc_h.ENODEV;
    }

    /** The object exists already and the request asked to create it exclusively (EEXIST). */
    public boolean isAlreadyExists() {
        return errno() == libc_h.EEXIST;
    }

    /** The kernel refused a value or a combination of the request as invalid (EINVAL). */
    public boolean isInvalidArgument() {
        return errno() == libc_h.EINVAL;
    }

    /** The kernel does not support what was asked, for this object or at all (EOPNOTSUPP). */
    public boolean isNotSupported() {
        return errno() == libc_h.EOPNOTSUPP;
    }

    static String format(String operation, int errno, String kernelMessage) {
        return format(operation, errno, kernelMessage, null);
    }

    static String format(String operation, int errno, String kernelMessage, String rejectedAttribute) {
        String s = operation + ": " + Errno.name(errno) + " (" + Errno.describe(errno) + ")";
        if (kernelMessage != null && !kernelMessage.isEmpty()) {
            s += "; kernel says: " + kernelMessage;
        }
        return rejectedAttribute == null ? s : s + "; rejected: " + rejectedAttribute;
    }
}
