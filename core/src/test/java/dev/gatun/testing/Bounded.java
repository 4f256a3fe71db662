package dev.gatun.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/**
 * Waits with a bound: a thread, process or task that hangs fails the test, naming what hung,
 * instead of stalling the build until CI kills it.
 */
public final class Bounded {

    /** Longer than anything here should take on a loaded two-core machine. */
    public static final Duration DEFAULT = Duration.ofMinutes(5);

    private Bounded() {}

    public static void join(Thread t, String what) {
        join(t, DEFAULT, what);
    }

    public static void join(Thread t, Duration limit, String what) {
        try {
            if (!t.join(limit)) {
                throw new AssertionError(what + " (thread " + t.getName() + ") did not finish within " + limit);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what, e);
        }
    }

    /** Waits for {@code latch} to open; one that stays shut (its opener failed first) fails instead of hanging. */
    public static void await(CountDownLatch latch, String what) {
        try {
            if (!latch.await(DEFAULT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(what + " did not happen within " + DEFAULT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what, e);
        }
    }

    /**
     * Waits until {@code done} holds, asking every 50 ms, for at most {@code limit}: a wait for an
     * event instead of a sleep that guesses how long it takes. Fails naming {@code what} when the
     * event does not come.
     */
    public static void until(Duration limit, String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " did not happen within " + limit);
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }

    /**
     * Whether {@code condition} came to hold within {@code within}, asked every 50 ms: for a test
     * that asserts on the answer with its own words, or asserts that something did not happen.
     */
    public static boolean eventually(Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting", e);
            }
        }
        return true;
    }

    /** The exit code of {@code p}; a process still running after {@code limit} is killed and fails the test. */
    public static int waitFor(Process p, Duration limit, String what) {
        try {
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(what + " (pid " + p.pid() + ") did not exit within " + limit + "; killed it");
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what, e);
        }
    }

    public static <T> T get(Future<T> f, String what) {
        return get(f, DEFAULT, what);
    }

    /** The value of {@code f}; its failure is rethrown as it was (an AssertionError stays one). */
    public static <T> T get(Future<T> f, Duration limit, String what) {
        try {
            return f.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError(what + " did not finish within " + limit, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new AssertionError(what + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what, e);
        }
    }
}
