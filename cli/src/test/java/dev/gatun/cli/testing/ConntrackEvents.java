package dev.gatun.cli.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The real {@code conntrack -E -p udp} in a namespace, in the background: every UDP entry made or
 * deleted there, one line each, as conntrack prints it ("[NEW] udp 17 30 src=192.0.2.2
 * dst=192.0.2.1 sport=40000 dport=5362 [UNREPLIED] src=192.0.2.1 ..."), with the moment it was
 * read (conntrack flushes after each event). {@link #start} returns once the events flow: it has
 * seen a marker entry of its own, made and deleted with {@code conntrack -I} and {@code -D}, in
 * 198.51.100.0/24, which nothing else uses.
 */
public final class ConntrackEvents implements AutoCloseable {

    private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(10);
    private static final String[] MARKER = {"-p", "udp", "-s", "198.51.100.1", "-d", "198.51.100.2", "--sport", "1", "--dport", "2"};

    private final Process process;
    private final List<Event> lines = new ArrayList<>();
    private final Thread reader;

    /** One line of conntrack -E and {@link System#nanoTime()} when it was read. */
    public record Event(long nanos, String text) {
        @Override
        public String toString() {
            return text;
        }
    }

    private ConntrackEvents(Process process) {
        this.process = process;
        this.reader = Thread.ofPlatform().daemon().name("conntrack-events").start(this::read);
    }

    public static ConntrackEvents start(NetworkNamespace ns) {
        ProcessBuilder pb = new ProcessBuilder("ip", "netns", "exec", ns.name(), "conntrack", "-E", "-p", "udp")
                .redirectErrorStream(true);
        ConntrackEvents events;
        try {
            events = new ConntrackEvents(pb.start());
            events.process.getOutputStream().close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            events.sync(ns);
        } catch (RuntimeException | Error e) {
            events.close();
            throw e;
        }
        return events;
    }

    private void read() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                long now = System.nanoTime();
                synchronized (lines) {
                    lines.add(new Event(now, line));
                    lines.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process was stopped
        }
    }

    /** Until the subscription is in, a marker goes unseen: made and deleted again until its deletion is read. */
    private void sync(NetworkNamespace ns) {
        long deadline = System.nanoTime() + SYNC_TIMEOUT.toNanos();
        while (true) {
            List<String> insert = new ArrayList<>(List.of("conntrack", "-I"));
            insert.addAll(List.of(MARKER));
            insert.addAll(List.of("-t", "10"));
            Oracle.in(ns, insert.toArray(String[]::new));
            List<String> delete = new ArrayList<>(List.of("conntrack", "-D"));
            delete.addAll(List.of(MARKER));
            Oracle.in(ns, delete.toArray(String[]::new));
            if (await(l -> l.contains("[DESTROY]") && l.contains("src=198.51.100.1 dst=198.51.100.2"), Duration.ofMillis(200))
                    != null) {
                return;
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("conntrack -E in " + ns + " did not report the marker within "
                        + SYNC_TIMEOUT.toSeconds() + " s (alive: " + process.isAlive() + "); it printed: " + events());
            }
        }
    }

    /** The first event that {@code p} accepts, waiting at most {@code within} for it; null if none came. */
    public Event await(Predicate<String> p, Duration within) {
        return await(null, p, within);
    }

    /**
     * The first event after {@code after} (null: from the first) that {@code p} accepts, waiting at
     * most {@code within} for it; null if none came. The order is conntrack's own.
     */
    public Event await(Event after, Predicate<String> p, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        synchronized (lines) {
            int from = after == null ? 0 : lines.indexOf(after) + 1;
            while (true) {
                for (Event e : lines.subList(from, lines.size())) {
                    if (p.test(e.text())) {
                        return e;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                try {
                    lines.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
        }
    }

    /** Every event read so far, the markers' too. */
    public List<Event> events() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
            reader.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
