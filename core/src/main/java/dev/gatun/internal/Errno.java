package dev.gatun.internal;

import dev.gatun.ErrnoException;
import dev.gatun.PrivilegeException;
import dev.gatun.bindings.internal.libc_h;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/** errno names and descriptions, asked of the C library rather than kept in a table of our own. */
public final class Errno {

    private static final ConcurrentHashMap<Integer, String> NAMES = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<Integer, String> DESCRIPTIONS = new ConcurrentHashMap<>();

    private Errno() {}

    /** "ENOENT" for 2; "errno N" where the C library has no name for N. */
    public static String name(int errno) {
        return NAMES.computeIfAbsent(errno, e -> {
            MemorySegment s = libc_h.strerrorname_np(e);
            return s.equals(MemorySegment.NULL) ? "errno " + e : s.reinterpret(256).getString(0);
        });
    }

    /** "No such file or directory" for 2. */
    public static String describe(int errno) {
        return DESCRIPTIONS.computeIfAbsent(errno, e -> libc_h.strerror(e).reinterpret(1024).getString(0));
    }

    /** Whether {@code errno} says the process or the system ran short of descriptors or memory. */
    public static boolean isShortage(int errno) {
        return errno == libc_h.EMFILE || errno == libc_h.ENFILE || errno == libc_h.ENOMEM;
    }

    /** The exception for a failed call: privilege errors get their own type. */
    public static ErrnoException exception(String operation, int errno) {
        if (errno == libc_h.EPERM || errno == libc_h.EACCES) {
            return new PrivilegeException(operation, errno);
        }
        return new ErrnoException(operation, errno);
    }
}
