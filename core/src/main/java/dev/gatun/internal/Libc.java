package dev.gatun.internal;

import dev.gatun.bindings.internal.CallState;
import dev.gatun.bindings.internal.libc_h;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The libc calls gatun makes, each turning a failure into an exception that names the
 * operation. errno is captured into a segment of the call's own arena, so concurrent calls
 * never see each other's errno.
 */
public final class Libc {

    private Libc() {}

    public static int open(String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            int fd = libc_h.open(state, arena.allocateFrom(path), flags | libc_h.O_CLOEXEC);
            return check(fd, state, "open " + path);
        }
    }

    public static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            check(libc_h.close(state, fd), state, "close fd " + fd);
        }
    }

    public static int socket(int domain, int type, int protocol) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            int fd = libc_h.socket(state, domain, type, protocol);
            return check(fd, state, "socket(" + domain + ", " + type + ", " + protocol + ")");
        }
    }

    /** setns(2) for a network namespace. Only the namespace switcher may call this. */
    public static void setns(int fd, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            check(libc_h.setns(state, fd, libc_h.CLONE_NEWNET), state, "enter network namespace " + what);
        }
    }

    /** unshare(CLONE_NEWNET): gives the calling thread a new, empty network namespace. */
    public static void unshareNetwork() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            check(libc_h.unshare(state, libc_h.CLONE_NEWNET), state, "create a network namespace");
        }
    }

    public static void mount(String source, String target, long flags, String operation) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            int r = libc_h.mount(state, arena.allocateFrom(source), arena.allocateFrom(target),
                    arena.allocateFrom("none"), flags, MemorySegment.NULL);
            check(r, state, operation);
        }
    }

    /** umount2(2); returns the errno on failure instead of throwing, for callers that tolerate some. */
    public static int umount2(String target, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            return libc_h.umount2(state, arena.allocateFrom(target), flags) < 0 ? CallState.errno(state) : 0;
        }
    }

    /** The namespace type (a CLONE_NEW* value) of a namespace file descriptor. */
    public static int namespaceType(int fd, String path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            return check(libc_h.ioctl(state, fd, libc_h.NS_GET_NSTYPE), state, "read the namespace type of " + path);
        }
    }

    public static void setIntSocketOption(int fd, int level, int option, int value, String operation) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            MemorySegment v = arena.allocateFrom(JAVA_INT, value);
            check(libc_h.setsockopt(state, fd, level, option, v, (int) v.byteSize()), state, operation);
        }
    }

    /** Like {@link #setIntSocketOption} but reports failure as the errno instead of throwing. */
    public static int trySetIntSocketOption(int fd, int level, int option, int value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            MemorySegment v = arena.allocateFrom(JAVA_INT, value);
            return libc_h.setsockopt(state, fd, level, option, v, (int) v.byteSize()) < 0 ? CallState.errno(state) : 0;
        }
    }

    public static int getIntSocketOption(int fd, int level, int option, String operation) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(arena);
            MemorySegment v = arena.allocate(JAVA_INT);
            MemorySegment len = arena.allocateFrom(JAVA_INT, (int) v.byteSize());
            check(libc_h.getsockopt(state, fd, level, option, v, len), state, operation);
            return v.get(JAVA_INT, 0);
        }
    }

    private static int check(int result, MemorySegment state, String operation) {
        if (result < 0) {
            throw Errno.exception(operation, CallState.errno(state));
        }
        return result;
    }
}
