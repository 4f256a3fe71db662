package dev.gatun.driver.bridge;

import dev.gatun.GatunException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Group commit without a thread of its own: requests from many threads queue up, and a caller
 * that finds nobody committing leads, turning everything queued into batches until the queue is
 * empty; callers that find a leader wait for their own outcome, which the leader hands them
 * directly (they do not queue up on the lock, so 16 waiting threads wake together, not one after
 * another). A lone caller commits on its own thread without queueing at all. The {@link Batch}
 * runs under the leader lock only, so what it uses is never shared between threads.
 */
final class GroupCommit {

    /** Commits one batch, under the leader lock: one answer for each request asked, in order. */
    @FunctionalInterface
    interface Batch {
        List<PortPlanner.Answer> commit(List<CommitRequest> asked);
    }

    /** What a caller finds once its batch was committed: an answer for each of its requests, or why the whole batch failed. */
    sealed interface Outcome {
        record Answered(List<PortPlanner.Answer> answers) implements Outcome {}

        record Failed(RuntimeException cause) implements Outcome {}
    }

    /**
     * Requests that go in the same batch (several only when they must), and the thread waiting
     * for their outcome, woken when it is there or to lead what a leader left. Only the thread
     * holding the leader lock sets the outcome, once.
     */
    private static final class Waiting {
        final List<CommitRequest> asked;
        final Thread caller = Thread.currentThread();
        volatile Outcome outcome;

        Waiting(List<CommitRequest> asked) {
            this.asked = asked;
        }
    }

    private static final int MAX_BATCH = 512;
    private static final int MAX_BATCHES_FOR_OTHERS = 4;
    /** How long a waiting caller parks before it looks again, should no wake-up come. */
    private static final long WAIT_NANOS = 1_000_000;

    private final Batch batch;
    private final ConcurrentLinkedQueue<Waiting> queue = new ConcurrentLinkedQueue<>();
    /** Held by the thread committing for everyone waiting; the others queue up behind it. */
    private final ReentrantLock leader = new ReentrantLock();
    private volatile boolean closed;

    GroupCommit(Batch batch) {
        this.batch = batch;
    }

    /**
     * Commits {@code asked} in one batch, perhaps with other callers' requests: the answers, in
     * order. A failure of the whole batch is thrown; a port a process holds is named here, on the
     * caller's thread with the leader lock let go, not while planning.
     */
    List<PortPlanner.Answer> await(List<CommitRequest> asked) {
        checkOpen();
        Waiting w = new Waiting(List.copyOf(asked));
        if (queue.isEmpty() && leader.tryLock()) {
            try {
                commit(List.of(w));
            } finally {
                leader.unlock();
            }
            if (!queue.isEmpty()) {
                // Callers that came meanwhile found the lock taken and wait: serve them as a leader would.
                lead(w);
            }
        } else {
            queue.add(w);
        }
        while (w.outcome == null) {
            lead(w);
            if (w.outcome == null) {
                // Woken with the outcome, or by a leader that stopped with requests still queued
                // (see lead); the timeout is only a safety net.
                LockSupport.parkNanos(this, WAIT_NANOS);
                if (Thread.currentThread().isInterrupted()) {
                    throw new GatunException("interrupted while waiting for a commit (it may still be made)");
                }
            }
        }
        // instanceof, not a pattern switch: on the publish path, where a cold call counts, its bootstrap would too.
        if (w.outcome instanceof Outcome.Answered a) {
            return a.answers();
        }
        RuntimeException cause = ((Outcome.Failed) w.outcome).cause();
        throw cause instanceof HostPortInUseException e ? e.namingItsProcess() : cause;
    }

    /** Runs {@code work} with no batch being committed meanwhile. */
    <T> T exclusively(Supplier<T> work) {
        leader.lock();
        try {
            return work.get();
        } finally {
            leader.unlock();
        }
    }

    /** Refuses work from now on, then runs {@code closing} once the batch being committed is done. */
    void close(Runnable closing) {
        closed = true;
        exclusively(() -> {
            closing.run();
            return null;
        });
    }

    /** Throws if closed: a caller that queued before close and leads after it must not commit. */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the driver is closed");
        }
    }

    /**
     * Commits what is queued if nobody else is committing. After unlocking it looks at the
     * queue again: a request added while it held the lock, whose caller found the lock taken,
     * is served by it or by whoever took the lock since (who looks again in turn). Once its own
     * request is answered it serves a few more batches at most, so that its caller is not kept
     * serving others for as long as they keep coming; what it leaves, their callers take over.
     */
    private void lead(Waiting own) {
        int extra = 0;
        while (!queue.isEmpty() && extra < MAX_BATCHES_FOR_OTHERS && leader.tryLock()) {
            try {
                List<Waiting> next = new ArrayList<>();
                for (Waiting q; next.size() < MAX_BATCH && (q = queue.poll()) != null; ) {
                    next.add(q);
                }
                if (!next.isEmpty()) {
                    commit(next);
                }
            } finally {
                leader.unlock();
            }
            if (own.outcome != null) {
                extra++;
            }
        }
        if (extra == MAX_BATCHES_FOR_OTHERS) {
            // Stopped with work queued: its first caller leads now, not at its timeout.
            Waiting next = queue.peek();
            if (next != null) {
                LockSupport.unpark(next.caller);
            }
        }
    }

    /** Commits {@code waiting} as one batch, under the leader lock, and hands each caller its outcome. */
    private void commit(List<Waiting> waiting) {
        List<CommitRequest> asked = new ArrayList<>(waiting.size());
        for (Waiting w : waiting) {
            asked.addAll(w.asked);
        }
        List<PortPlanner.Answer> answers;
        try {
            checkOpen();
            answers = batch.commit(asked);
        } catch (RuntimeException e) {
            waiting.forEach(w -> hand(w, new Outcome.Failed(e)));
            return;
        }
        int at = 0;
        for (Waiting w : waiting) {
            int n = w.asked.size();
            hand(w, new Outcome.Answered(List.copyOf(answers.subList(at, at + n))));
            at += n;
        }
    }

    private static void hand(Waiting w, Outcome outcome) {
        if (w.outcome == null) {
            w.outcome = outcome;
        }
        if (w.caller != Thread.currentThread()) {
            LockSupport.unpark(w.caller);
        }
    }
}
