package dev.gatun.cli;

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
 */
final class HeapKeeper implements AutoCloseable {

    private static final long PERIOD_MILLIS = 1_000;
    private static final long MIN_GROWTH_BYTES = 16L << 20;
    /** Clock ticks of CPU in one period below which the serve counts as quiet: a tenth of it at 100 Hz. */
    private static final long QUIET_TICKS = 10;

    private final Thread thread;
    private volatile boolean running = true;

    private HeapKeeper() {
        thread = Thread.ofPlatform().daemon().name("gatun-heap").start(this::run);
    }

    static HeapKeeper start() {
        return new HeapKeeper();
    }

    private void run() {
        Runtime rt = Runtime.getRuntime();
        long settled = rt.totalMemory();
        // The CPU time is read only while the heap stands grown: an idle serve then reads no
        // /proc files each second, which is work that the JIT would go on compiling.
        long ticks = -1;
        while (running) {
            try {
                Thread.sleep(PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
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

    @Override
    public void close() {
        running = false;
        thread.interrupt();
    }
}
