package dev.gatun.netns;

import dev.gatun.GatunException;
import dev.gatun.internal.Libc;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs tasks inside a network namespace on dedicated platform threads.
 *
 * <p>setns(2) changes the namespace of the calling OS thread only. A virtual thread or a pooled
 * thread of someone else's may run on any carrier, so gatun never calls setns on one: the task
 * is handed to a worker thread of its own, which enters the namespace, runs the task and
 * switches back before it takes the next task. A worker that cannot switch back ends itself,
 * so no thread ever runs anything in the wrong namespace.
 */
final class NamespaceSwitcher {

    private static final String SELF = "/proc/thread-self/ns/net";
    private static final int WORKERS = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
    private static final ThreadPoolExecutor POOL;
    private static final ThreadLocal<Boolean> ON_WORKER = ThreadLocal.withInitial(() -> false);

    static {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory factory = r -> Thread.ofPlatform().daemon().name("gatun-netns-" + n.incrementAndGet())
                .unstarted(() -> {
                    ON_WORKER.set(true);
                    r.run();
                });
        POOL = new ThreadPoolExecutor(WORKERS, WORKERS, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), factory);
        POOL.allowCoreThreadTimeOut(true);
    }

    private NamespaceSwitcher() {}

    /** Whether the calling thread is one of the workers, the only threads that ever call setns. */
    static boolean isWorkerThread() {
        return ON_WORKER.get();
    }

    /** Runs the task with the network namespace at {@code target} as the thread's own. */
    static <T> T call(String target, Callable<T> task) {
        if (ON_WORKER.get()) {
            // Nested call from a task already on a worker: switch this thread in place, then back.
            try {
                return switchAndRun(target, task);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Exception e) {
                throw new GatunException("task in " + target + " failed: " + e, e);
            }
        }
        return onWorker(() -> switchAndRun(target, task));
    }

    /** Runs the task in a new, empty network namespace, and returns the thread to its own afterwards. */
    static <T> T callInNewNamespace(Callable<T> task) {
        return onWorker(() -> awayFromHome(Libc::unshareNetwork, task));
    }

    private static <T> T switchAndRun(String target, Callable<T> task) throws Exception {
        return awayFromHome(() -> {
            int dest = Libc.open(target, 0);
            try {
                Libc.setns(dest, target);
            } finally {
                Libc.close(dest);
            }
        }, task);
    }

    /** Keeps a handle on the thread's own namespace, leaves it, runs the task, and always goes back. */
    private static <T> T awayFromHome(Runnable leave, Callable<T> task) throws Exception {
        int home = Libc.open(SELF, 0);
        try {
            leave.run();
            try {
                return task.call();
            } finally {
                returnHome(home);
            }
        } finally {
            Libc.close(home);
        }
    }

    private static void returnHome(int home) {
        try {
            Libc.setns(home, "of this thread before the task");
        } catch (RuntimeException e) {
            // This thread is stranded in a foreign namespace: end it rather than reuse it.
            throw new StrandedThreadError(e);
        }
    }

    private static <T> T onWorker(Callable<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        POOL.execute(() -> {
            try {
                result.complete(work.call());
            } catch (StrandedThreadError e) {
                result.completeExceptionally(e.getCause());
                throw e; // ends this worker; the pool starts a fresh one when needed
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GatunException("interrupted while waiting for a task in a network namespace", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new GatunException("task in a network namespace failed: " + cause, cause);
        }
    }

    private static final class StrandedThreadError extends Error {
        StrandedThreadError(RuntimeException cause) {
            super("could not return to the thread's own network namespace", cause);
        }
    }
}
