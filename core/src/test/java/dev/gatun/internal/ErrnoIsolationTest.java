package dev.gatun.internal;

import dev.gatun.ErrnoException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.testing.Bounded;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** errno lives in each call's own state: eight threads failing differently at once each see their own. */
class ErrnoIsolationTest {

    private record FailingCall(String expected, Runnable call) {}

    @Test
    void eightThreadsMakingDifferentFailingCallsEachGetTheirOwnErrno() throws Exception {
        Path dir = Files.createTempDirectory("gatun-errno");
        String longPath = "/" + "x".repeat(libc_h.PATH_MAX + 10);
        List<FailingCall> calls = List.of(
                new FailingCall("ENOENT", () -> Libc.open(dir.resolve("missing").toString(), libc_h.O_RDONLY)),
                new FailingCall("ENOTDIR", () -> Libc.open("/etc/hostname/x", libc_h.O_RDONLY)),
                new FailingCall("EISDIR", () -> Libc.open(dir.toString(), libc_h.O_WRONLY)),
                new FailingCall("ENAMETOOLONG", () -> Libc.open(longPath, libc_h.O_RDONLY)),
                new FailingCall("EBADF", () -> Libc.close(1_000_000)),
                new FailingCall("EAFNOSUPPORT", () -> Libc.socket(4242, libc_h.SOCK_RAW, 0)),
                new FailingCall("EPROTONOSUPPORT", () -> Libc.socket(libc_h.AF_NETLINK, libc_h.SOCK_RAW, 4242)),
                new FailingCall("ENOTTY", ErrnoIsolationTest::namespaceTypeOfAPlainFile));
        CyclicBarrier start = new CyclicBarrier(calls.size());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (FailingCall c : calls) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await(1, TimeUnit.MINUTES);
                    for (int i = 0; i < 2000; i++) {
                        String got = errnoOf(c.call);
                        if (!got.equals(c.expected)) {
                            throw new AssertionError("iteration " + i + ": expected " + c.expected + " but got " + got);
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        for (Thread t : threads) {
            Bounded.join(t, "a thread making failing calls");
        }
        Files.delete(dir);
        assertThat(failure.get()).isNull();
    }

    private static void namespaceTypeOfAPlainFile() {
        int fd = Libc.open("/etc/hostname", libc_h.O_RDONLY);
        try {
            Libc.namespaceType(fd, "/etc/hostname");
        } finally {
            Libc.close(fd);
        }
    }

    private static String errnoOf(Runnable call) {
        try {
            call.run();
            return "no error";
        } catch (ErrnoException e) {
            return e.errnoName();
        }
    }

}
