package dev.gatun.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Runs the same work on N platform threads, started together; returns the wall time in microseconds. */
final class Threads {

    /** Far above any run here; a thread still going after it is stuck, not slow. */
    private static final Duration LIMIT = Duration.ofMinutes(30);

    interface Work {
        void run(int thread, int iteration) throws Exception;
    }

    private Threads() {}

    static long run(int threads, int iterations, Work work) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            all.add(Thread.ofPlatform().start(() -> {
                try {
                    if (!start.await(1, TimeUnit.MINUTES)) {
                        throw new IllegalStateException("the benchmark's threads were never started together");
                    }
                    for (int i = 0; i < iterations; i++) {
                        work.run(id, i);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : all) {
            if (!t.join(LIMIT)) {
                throw new IllegalStateException("a benchmark thread (" + t.getName() + ") did not finish within " + LIMIT);
            }
        }
        long us = (System.nanoTime() - t0) / 1000;
        if (failure.get() != null) {
            throw new IllegalStateException("a benchmark thread failed: " + failure.get(), failure.get());
        }
        return us;
    }
}
