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
        holder.destroy();
        throw new IllegalStateException("could not take /run/xtables.lock");
    }
}
