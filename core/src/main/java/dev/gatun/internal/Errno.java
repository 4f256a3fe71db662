package dev.gatun.internal;

import dev.gatun.ErrnoException;
import dev.gatun.PrivilegeException;
import dev.gatun.bindings.internal.libc_h;


/** errno names, descriptions and exceptions, for the native glue; the C library's names are kept by {@link ErrnoException}. */
public final class Errno {

    private Errno() {}

    /** "ENOENT" for 2 (see {@link ErrnoException#nameOf}). */
    public static String name(int errno) {
        return ErrnoException.nameOf(errno);
    }

    /** "No such file or directory" for 2. */
    public static String describe(int errno) {
        return ErrnoException.descriptionOf(errno);
    }

    /** The exception for a failed call: privilege errors get their own type. */
    public static ErrnoException exception(String operation, int errno) {
        if (errno == libc_h.EPERM || errno == libc_h.EACCES) {
            return new PrivilegeException(operation, errno);
        }
        return new ErrnoException(operation, errno);
    }
}
