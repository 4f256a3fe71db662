package dev.gatun.cli.host;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The systemd side of sd_notify for the tests: a unix datagram socket bound at a path of the
 * test's own, as systemd binds NOTIFY_SOCKET for a Type=notify service. Receives with
 * recv(MSG_DONTWAIT) polled until a deadline: the JDK has no unix datagram sockets.
 */
final class NotifyListener implements AutoCloseable {

    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int MSG_DONTWAIT = 0x40;
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SOCKET = libc("socket", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle BIND = libc("bind", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle RECV = libc("recv", FunctionDescriptor.of(ValueLayout.JAVA_LONG,
            ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    private static final MethodHandle CLOSE = libc("close", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_INT));

    private final Path path;
    private final int fd;

    private NotifyListener(Path path, int fd) {
        this.path = path;
        this.fd = fd;
    }

    static NotifyListener bind(Path path) throws Throwable {
        byte[] p = path.toString().getBytes(StandardCharsets.UTF_8);
        int fd = (int) SOCKET.invokeExact(AF_UNIX, SOCK_DGRAM, 0);
        if (fd < 0) {
            throw new AssertionError("socket(AF_UNIX, SOCK_DGRAM) failed");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(110);
            addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
            MemorySegment.copy(p, 0, addr, ValueLayout.JAVA_BYTE, 2, p.length);
            if ((int) BIND.invokeExact(fd, addr, 2 + p.length + 1) != 0) {
                int ignored = (int) CLOSE.invokeExact(fd);
                throw new AssertionError("cannot bind a datagram socket at " + path);
            }
        }
        return new NotifyListener(path, fd);
    }

    Path path() {
        return path;
    }

    /** The next datagram's text, or null when none came within {@code within}. */
    String next(Duration within) throws Throwable {
        long deadline = System.nanoTime() + within.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(4096);
            do {
                long n = (long) RECV.invokeExact(fd, buf, 4096L, MSG_DONTWAIT);
                if (n >= 0) {
                    return new String(buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
                }
                Thread.sleep(5);
            } while (System.nanoTime() < deadline);
        }
        return null;
    }

    @Override
    public void close() throws Exception {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new Exception(t);
        }
        Files.deleteIfExists(path);
    }

    private static MethodHandle libc(String name, FunctionDescriptor d) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), d);
    }
}
