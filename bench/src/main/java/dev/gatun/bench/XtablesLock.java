package dev.gatun.bench;

import java.io.IOException;

/** Another process holding /run/xtables.lock, as in the field report. */
final class XtablesLock {

    private XtablesLock() {}

    static Process hold(int seconds) throws IOException, InterruptedException {
        Process holder = new ProcessBuilder("flock", "--exclusive", "/run/xtables.lock", "sleep", Integer.toString(seconds))
                .start();
        for (int i = 0; i < 200; i++) {
            if (new ProcessBuilder("flock", "--nonblock", "/run/xtables.lock", "true").start().waitFor() != 0) {
                return holder;
            }
            Thread.sleep(10);
        }
        release(holder);
        throw new IllegalStateException("could not take /run/xtables.lock");
    }

    /**
     * Ends the holder if it still holds the lock (a tool that finished its publishes before the
     * time was up need not wait for it): flock and its sleep, which inherited the locked file.
     */
    static void release(Process holder) throws InterruptedException {
        holder.descendants().forEach(ProcessHandle::destroy);
        holder.destroy();
        holder.waitFor();
    }
}
