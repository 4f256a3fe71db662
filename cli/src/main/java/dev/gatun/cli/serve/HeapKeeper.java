package dev.gatun.cli.serve;

import java.util.function.Consumer;

/**
 * Gives the serve's heap back after a burst. The serve runs with the serial collector, which
 * returns heap to the system only at a full collection; a burst (publishing 50,000 mappings in
 * one request, the repair of a flushed table) fills the old generation with what was alive for
 * its few seconds, and a daemon that then only answers small requests may not run a full
 * collection for hours. So every second this looks at the committed heap, and while it stands
 * grown by more than half (and 16 MiB) since the last full collection it ran, at the CPU time of
 * the process's threads but the JIT's: once those used under a tenth of a second (the burst is
 * over), it runs one, which with -XX:-ShrinkHeapInSteps shrinks the heap to what is
 * alive. Measured with 100,000 mappings: see bench/README.md, "The serve's memory".
 *
 * <p>Once, after the ready line: the compilers go on for seconds after the start's requests (the
 * warm-up's, when it ran), and the first-tier code that the second tier replaced, with the garbage promoted
 * meanwhile, is freed only at a full collection, which an idle serve may not run for days. So
 * when they and the rest have been quiet for {@link #SETTLE_QUIET_PERIODS} periods in a row it
 * runs one (1.4 MiB of resident memory of an idle serve's 97, bench/runs/2026-12-06-a-serve-s-memory-and-the.md, "A serve's memory and the netavark
 * plugin's JSON"); a serve that stays busy through {@link #SETTLE_PERIODS} periods skips it.
 */
public final class HeapKeeper implements AutoCloseable {

    private static final long PERIOD_MILLIS = 1_000;
    private static final long MIN_GROWTH_BYTES = 16L << 20;
    /** Clock ticks of CPU in one period below which the serve counts as quiet: a tenth of it at 100 Hz. */
    private static final long QUIET_TICKS = 10;

    /** Quiet periods in a row (the compilers' included) after which the start counts as settled. */
    private static final int SETTLE_QUIET_PERIODS = 2;
    /** Periods after the ready line within which the start must settle, or its collection is skipped. */
    private static final int SETTLE_PERIODS = 60;

    private final Consumer<String> log;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean settling;

    private HeapKeeper(Consumer<String> log) {
        this.log = log;
        thread = Thread.ofPlatform().daemon().name("gatun-heap").start(this::run);
    }

    /** Started before the serve's warm-up; {@code log} gets the one line of {@link #ready}'s collection. */
    public static HeapKeeper start(Consumer<String> log) {
        return new HeapKeeper(log);
    }

    /** The serve printed its ready line: the start's collection is due once it is quiet. */
    public void ready() {
        settling = true;
    }

    private void run() {
        Runtime rt = Runtime.getRuntime();
        long settled = rt.totalMemory();
        // The CPU time is read only while the heap stands grown or the start settles: an idle
        // serve then reads no /proc files each second, which is work that the JIT would go on compiling.
        long ticks = -1;
        Settling start = null;
        while (running) {
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            if (settling) {
                start = start == null ? new Settling() : start;
                if (start.settledAfter(ThreadTicks.compilers(), ThreadTicks.allButCompilers())) {
                    long before = rt.totalMemory();
                    System.gc();
                    settled = rt.totalMemory();
                    log.accept("settled after the start: one full collection freed the code the compilers replaced; heap "
                            + mib(settled) + " MiB, was " + mib(before));
                }
                if (start.done()) {
                    settling = false;
                    ticks = -1; // read again: the last reading is from before the wait
                }
                continue;
            }
            long now = rt.totalMemory();
            if (now < settled) {
                // A full collection of the JVM's own shrank it further.
                settled = now;
            }
            if (now <= settled + Math.max(MIN_GROWTH_BYTES, settled / 2)) {
                ticks = -1;
                continue;
            }
            long t = ThreadTicks.allButCompilers();
            boolean quiet = t >= 0 && ticks >= 0 && t - ticks < QUIET_TICKS;
            ticks = t;
            if (quiet) {
                System.gc();
                settled = rt.totalMemory();
                ticks = -1;
            }
        }
    }

    /** {@code bytes} in MiB with one decimal, without String.format: that loads the locale data the serve's flags keep out. */
    private static String mib(long bytes) {
        long tenths = Math.round(bytes * 10.0 / (1 << 20));
        return tenths / 10 + "." + tenths % 10;
    }

    /** The periods after the ready line: whether each ends the wait with the start's collection due. */
    static final class Settling {
        private long compilers = -1;
        private long others = -1;
        private int quietInARow;
        private int periods;
        private boolean done;

        /** One period's CPU ticks (-1: unreadable): true once, when the collection is due. */
        boolean settledAfter(long compilerTicks, long otherTicks) {
            boolean quiet = compilers >= 0 && compilerTicks >= 0 && compilerTicks - compilers <= 1
                    && others >= 0 && otherTicks >= 0 && otherTicks - others < QUIET_TICKS;
            compilers = compilerTicks;
            others = otherTicks;
            quietInARow = quiet ? quietInARow + 1 : 0;
            periods++;
            if (done) {
                return false;
            }
            done = quietInARow >= SETTLE_QUIET_PERIODS || periods >= SETTLE_PERIODS;
            return quietInARow >= SETTLE_QUIET_PERIODS;
        }

        /** Whether the wait is over: the collection ran, or the serve stayed busy too long. */
        boolean done() {
            return done;
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
