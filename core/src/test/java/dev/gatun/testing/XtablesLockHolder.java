package dev.gatun.testing;

import java.time.Duration;

/**
 * Another process holding the xtables lock, as in the first field report: {@code flock} on
 * /run/xtables.lock (the one lock file of every iptables binary on the machine, whatever the
 * namespace) running {@code sleep} for as long as asked, returned once a non-blocking
 * {@code flock} sees the lock taken.
 */
public final class XtablesLockHolder {

    public static final String LOCK = "/run/xtables.lock";

    private XtablesLockHolder() {}

    /** Holds the lock for {@code seconds}, or until the returned process is destroyed. */
    public static Process hold(int seconds) throws Exception {
        Process holder = new ProcessBuilder("flock", "--exclusive", LOCK, "sleep", Integer.toString(seconds)).start();
        for (int i = 0; i < 100; i++) {
            if (Bounded.waitFor(new ProcessBuilder("flock", "--nonblock", LOCK, "true").start(), Duration.ofSeconds(10),
                    "flock --nonblock " + LOCK) != 0) {
                return holder;
            }
            Thread.sleep(20);
        }
        holder.destroy();
        throw new AssertionError("could not see the xtables lock taken by " + holder.pid());
    }
}
