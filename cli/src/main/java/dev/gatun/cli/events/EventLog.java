package dev.gatun.cli.events;

import dev.gatun.driver.HealListener;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The serve's log of changes: every mapping it published or unpublished (through any entry
 * point), every change of another process to gatun's table it saw, every repair. The last
 * {@link #KEPT} events are kept for readers that ask for the past ({@code --since}); a reader
 * that falls behind further than that is told how many it missed. A mapping's event holds the
 * mapping itself (the driver's own immutable record), made into its JSON document only when a
 * reader asks: a publish of 32 ports built 32 maps that most serves never read, and kept 10,000 of them.
 */
public final class EventLog implements PortListener, HealListener {

    /** Events kept: about 1.2 MiB of one-port mappings' events (4.4 MiB less than when each held its JSON map), hours of a busy CI host. */
    public static final int KEPT = 10_000;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition added = lock.newCondition();
    private final ArrayDeque<ServeEvent> kept = new ArrayDeque<>();
    private long nextSeq = 1;
    private boolean closed;

    @Override
    public void published(List<PortMapping> mappings) {
        String cause = EventCause.current();
        for (PortMapping m : mappings) {
            add("publish", cause, Map.of("mapping", m));
        }
    }

    @Override
    public void unpublished(List<PortMapping> mappings) {
        String cause = EventCause.current();
        for (PortMapping m : mappings) {
            add("unpublish", cause, Map.of("mapping", m));
        }
    }

    @Override
    public void changedOutside(String what, String by) {
        add("outside-change", by, Map.of("what", what));
    }

    @Override
    public void repaired(List<String> lines, Cause kind, String cause, Duration took) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("repaired", lines);
        d.put("seconds", took.toNanos() / 1e9);
        add("repair", cause, d);
    }

    @Override
    public void repairFailed(String message, Cause kind, String cause) {
        add("repair-failed", cause, Map.of("message", message));
    }

    private void add(String kind, String cause, Map<String, Object> details) {
        lock.lock();
        try {
            kept.addLast(new ServeEvent(nextSeq++, Instant.now(), kind, cause, details));
            if (kept.size() > KEPT) {
                kept.removeFirst();
            }
            added.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** What a reader gets at a time: the events after the one it had, and how many it missed in between. */
    public record Batch(List<ServeEvent> events, long missed, long last, boolean closed) { }

    /**
     * The kept events after {@code afterSeq} that are not before {@code since} (null: any),
     * waiting up to {@code wait} for one when there is none yet.
     */
    public Batch after(long afterSeq, Instant since, Duration wait) throws InterruptedException {
        lock.lock();
        try {
            long deadline = System.nanoTime() + wait.toNanos();
            while (!closed && (kept.isEmpty() || kept.getLast().seq() <= afterSeq)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                added.await(left, TimeUnit.NANOSECONDS);
            }
            List<ServeEvent> out = new ArrayList<>();
            long first = kept.isEmpty() ? nextSeq : kept.getFirst().seq();
            long missed = Math.max(0, first - afterSeq - 1);
            for (ServeEvent e : kept) {
                if (e.seq() > afterSeq && (since == null || !e.time().isBefore(since))) {
                    out.add(e);
                }
            }
            return new Batch(out, since == null ? missed : 0, nextSeq - 1, closed);
        } finally {
            lock.unlock();
        }
    }

    /** The number of the last event so far (0: none). */
    public long last() {
        lock.lock();
        try {
            return nextSeq - 1;
        } finally {
            lock.unlock();
        }
    }

    /** Ends every reader's wait: the serve stops. */
    public void close() {
        lock.lock();
        try {
            closed = true;
            added.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
