package dev.gatun.bench;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** Another process holding /run/xtables.lock, as in the field report. */
final class XtablesLock {

    private XtablesLock() {}

    static Process hold(int seconds) throws IOException, InterruptedException {
        Process holder = new ProcessBuilder("flock", "--exclusive", "/run/xtables.lock", "sleep", Integer.toString(seconds))
                .start();
        for (int i = 0; i < 200; i++) {
            Process probe = new ProcessBuilder("flock", "--nonblock", "/run/xtables.lock", "true").start();
            if (!probe.waitFor(10, TimeUnit.SECONDS)) {
                probe.destroyForcibly();
                release(holder);
                throw new IllegalStateException("flock --nonblock on /run/xtables.lock did not exit within 10 s");
            }
            if (probe.exitValue() != 0) {
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
        if (!holder.waitFor(10, TimeUnit.SECONDS)) {
            holder.destroyForcibly();
            throw new IllegalStateException("the process holding /run/xtables.lock did not end within 10 s of SIGTERM");
        }
    }
}
