package dev.gatun;

import dev.gatun.bindings.internal.libc_h;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/** A system call or kernel request failed with an errno; the message names the operation. */
public class ErrnoException extends GatunException {

    private static final ConcurrentHashMap<Integer, String> NAMES = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<Integer, String> DESCRIPTIONS = new ConcurrentHashMap<>();

    private final int errno;
    private final String operation;

    public ErrnoException(String operation, int errno) {
        this(operation, errno, operation + ": " + nameOf(errno) + " (" + descriptionOf(errno) + ")");
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
        return nameOf(errno);
    }

    /** "ENOENT" for 2, asked of the C library; "errno N" where it has no name for N. */
    public static String nameOf(int errno) {
        return NAMES.computeIfAbsent(errno, e -> {
            MemorySegment s = libc_h.strerrorname_np(e);
            return s.equals(MemorySegment.NULL) ? "errno " + e : s.reinterpret(256).getString(0);
        });
    }

    /** "No such file or directory" for 2, asked of the C library. */
    public static String descriptionOf(int errno) {
        return DESCRIPTIONS.computeIfAbsent(errno, e -> libc_h.strerror(e).reinterpret(1024).getString(0));
    }

    /**
     * Whether the call failed for want of file descriptors (of the process, EMFILE, or of the
     * system, ENFILE) or of memory (ENOMEM): a shortage that may pass, so the same work may
     * succeed when tried again later.
     */
    public boolean isShortage() {
        return errno == libc_h.EMFILE || errno == libc_h.ENFILE || errno == libc_h.ENOMEM;
    }

    /** What gatun was doing, for example "add table ip gatun". */
    public String operation() {
        return operation;
    }
}
