package dev.gatun.cli.host;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * systemd's readiness protocol (sd_notify(3)): one datagram of "KEY=VALUE" lines to the unix
 * socket that NOTIFY_SOCKET names (a path, or "@name" in the abstract namespace). The JDK has no
 * unix datagram socket, so the three libc calls go through the FFM API.
 */
public final class SystemdNotify {

    private static final int AF_UNIX = 1;
    private static final int SOCK_DGRAM = 2;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int MSG_NOSIGNAL = 0x4000;
    /** sizeof(struct sockaddr_un): a two-byte family and 108 bytes of path. */
    private static final int SOCKADDR_UN = 110;

    private final String socket;

    private SystemdNotify(String socket) {
        this.socket = socket;
    }

    /** The notifier of this process (systemd set NOTIFY_SOCKET), or null when nobody listens. */
    public static SystemdNotify fromEnvironment() {
        String s = System.getenv("NOTIFY_SOCKET");
        return s == null || s.isEmpty() ? null : new SystemdNotify(s);
    }

    public String socket() {
        return socket;
    }

    /**
     * Sends {@code state} ("READY=1\nSTATUS=...", "STOPPING=1"); throws with the reason when it
     * cannot, which the serve logs (a supervisor that misses READY=1 stops the service).
     */
    public void send(String state) {
        byte[] path = socket.getBytes(StandardCharsets.UTF_8);
        boolean isAbstract = path[0] == '@';
        if (!isAbstract && path[0] != '/') {
            throw new IllegalArgumentException("NOTIFY_SOCKET=" + socket + " is neither a path nor @name");
        }
        if (path.length > SOCKADDR_UN - 2 - (isAbstract ? 0 : 1)) {
            throw new IllegalArgumentException("NOTIFY_SOCKET=" + socket + " is longer than a unix socket's path may be");
        }
        Libc c = Libc.INSTANCE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment addr = arena.allocate(SOCKADDR_UN);
            addr.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
            MemorySegment.copy(path, 0, addr, ValueLayout.JAVA_BYTE, 2, path.length);
            if (isAbstract) {
                addr.set(ValueLayout.JAVA_BYTE, 2, (byte) 0);
            }
            // An abstract name's length is exactly its bytes; a path's includes its NUL.
            int addrLen = 2 + path.length + (isAbstract ? 0 : 1);
            byte[] text = state.getBytes(StandardCharsets.UTF_8);
            MemorySegment msg = arena.allocate(text.length);
            MemorySegment.copy(text, 0, msg, ValueLayout.JAVA_BYTE, 0, text.length);
            int fd = (int) c.socket.invokeExact(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                throw new IllegalStateException("cannot make a unix datagram socket for NOTIFY_SOCKET");
            }
            try {
                long sent = (long) c.sendto.invokeExact(fd, msg, (long) text.length, MSG_NOSIGNAL, addr, addrLen);
                if (sent != text.length) {
                    throw new IllegalStateException("could not send " + state.lines().findFirst().orElse("")
                            + " to NOTIFY_SOCKET=" + socket + " (nobody listening there?)");
                }
            } finally {
                int ignored = (int) c.close.invokeExact(fd);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sd_notify to " + socket + ": " + t, t);
        }
    }

    /** socket(2), sendto(2) and close(2) from the C library. */
    private static final class Libc {
        static final Libc INSTANCE = new Libc();
        final MethodHandle socket;
        final MethodHandle sendto;
        final MethodHandle close;

        private Libc() {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            socket = linker.downcallHandle(libc.find("socket").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            sendto = linker.downcallHandle(libc.find("sendto").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
                    ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            close = linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT));
        }
    }
}
