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
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The real {@code nft --handle monitor} in a namespace, in the background: every nftables change
 * anyone makes there, one line each, as nft prints it ("delete rule ip filter FORWARD handle 18",
 * "insert rule ip filter FORWARD counter packets 0 bytes 0 jump DOCKER-USER # handle 27").
 *
 * <p>The window is exact: {@link #start} returns once the monitor has seen a marker table come
 * and go, and {@link #stop} once it has seen a second one, so every change committed between the
 * two calls is in {@link #stop}'s list (the markers are not). The marker table, {@code ip
 * nftmonitor_mark_HEX}, is added and deleted in the same breath.
 */
public final class NftMonitor implements AutoCloseable {

    private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(10);

    private final NetworkNamespace ns;
    private final Process process;
    private final List<Event> lines = new ArrayList<>();
    private final Thread reader;

    private NftMonitor(NetworkNamespace ns, Process process) {
        this.ns = ns;
        this.process = process;
        this.reader = Thread.ofPlatform().daemon().name("nft-monitor-" + ns.name()).start(this::read);
    }

    /** Starts {@code nft monitor} in {@code ns} and returns once it reports changes. */
    public static NftMonitor start(NetworkNamespace ns) {
        ProcessBuilder pb = new ProcessBuilder("ip", "netns", "exec", ns.name(), "nft", "--handle", "monitor").redirectErrorStream(true);
        NftMonitor m;
        try {
            m = new NftMonitor(ns, pb.start());
            m.process.getOutputStream().close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        m.mark();
        return m;
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

    /** Adds and deletes a marker table; returns once the monitor printed its deletion. */
    private void mark() {
        String table = "nftmonitor_mark_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        long deadline = System.nanoTime() + SYNC_TIMEOUT.toNanos();
        String gone = "delete table ip " + table;
        // Until the monitor has subscribed, a marker goes unseen: repeat it.
        while (true) {
            Oracle.in(ns, "nft", "add table ip " + table + "; delete table ip " + table);
            synchronized (lines) {
                long waitUntil = Math.min(deadline, System.nanoTime() + Duration.ofMillis(200).toNanos());
                while (lines.stream().noneMatch(l -> l.text().startsWith(gone)) && System.nanoTime() < waitUntil) {
                    try {
                        lines.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitUntil - System.nanoTime())));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new AssertionError(e);
                    }
                }
                if (lines.stream().anyMatch(l -> l.text().startsWith(gone))) {
                    return;
                }
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError("nft monitor in " + ns + " did not report a change within " + SYNC_TIMEOUT.toSeconds()
                        + " s (alive: " + process.isAlive() + "); it printed: " + snapshot());
            }
        }
    }

    private List<Event> snapshot() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /**
     * One line of nft monitor and {@link System#nanoTime()} when it was read (nft flushes its
     * output after each message, so that is within a scheduling delay of the commit).
     */
    public record Event(long nanos, String text) {
        @Override
        public String toString() {
            return text;
        }
    }

    /** When the monitor first read a line that {@code p} finds something in (null: none yet). */
    public Long first(Pattern p) {
        synchronized (lines) {
            for (Event e : lines) {
                if (p.matcher(e.text()).find()) {
                    return e.nanos();
                }
            }
        }
        return null;
    }

    /**
     * Stops the monitor and returns the changes between {@link #start} and now: the lines that
     * report a change (add, insert, create, delete, replace, update, flush, ...), without nft's
     * "# new generation" comments and without the markers.
     */
    public List<Event> stop() {
        mark();
        close();
        return snapshot().stream()
                .filter(l -> !l.text().isBlank() && !l.text().startsWith("#"))
                .filter(l -> !l.text().contains("nftmonitor_mark_"))
                .toList();
    }

    /**
     * The "# new generation N by process PID (NAME)" lines read so far, but those of nft (the
     * markers'): after {@link #stop}, one for each transaction committed between the two calls by
     * any other process.
     */
    public List<Event> generations() {
        return snapshot().stream().filter(l -> l.text().startsWith("# new generation") && !l.text().endsWith("(nft)"))
                .toList();
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

    /**
     * How many of each kind of change: the line up to the chain's name, for example "delete rule
     * ip filter FORWARD" or "create chain ip nat DOCKER"; table lines up to the table's name.
     */
    public static Map<String, Integer> kinds(List<Event> changes) {
        Map<String, Integer> out = new TreeMap<>();
        for (Event e : changes) {
            out.merge(kind(e.text()), 1, Integer::sum);
        }
        return out;
    }

    /** "delete rule ip filter FORWARD handle 9" -> "delete rule ip filter FORWARD". */
    public static String kind(String change) {
        String[] w = change.split("\\s+");
        int words = w.length > 1 && w[1].equals("table") ? 4 : 5; // verb object family table [chain]
        return String.join(" ", List.of(w).subList(0, Math.min(words, w.length)));
    }

    /** The changes whose text matches. */
    public static List<Event> matching(List<Event> changes, Predicate<String> p) {
        return changes.stream().filter(e -> p.test(e.text())).toList();
    }
}
