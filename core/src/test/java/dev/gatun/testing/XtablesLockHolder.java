package dev.gatun.testing;

import java.time.Duration;

/**
 * Another process holding the xtables lock, as in the first field report: one process that
 * takes {@code flock} on /run/xtables.lock (the one lock file of every iptables binary on the
 * machine, whatever the namespace) and then becomes {@code sleep} for as long as asked, returned
 * once a non-blocking {@code flock} sees the lock taken. One process, not {@code flock CMD}
 * (whose child would go on holding the lock after the parent is killed): destroying it lets go.
 */
public final class XtablesLockHolder {

    public static final String LOCK = "/run/xtables.lock";

    private XtablesLockHolder() {}

    /** Holds the lock for {@code seconds}, or until the returned process is destroyed. */
    public static Process hold(int seconds) throws Exception {
        Process holder = new ProcessBuilder("sh", "-c", "exec 9>>" + LOCK + " && flock --exclusive 9 && exec sleep "
                + seconds).start();
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

    /** Ends {@code holder} and fails unless the lock is free after: no test leaves it taken. */
    public static void release(Process holder) throws Exception {
        holder.destroy();
        Bounded.waitFor(holder, Duration.ofSeconds(10), "the process holding the xtables lock");
        int free = Bounded.waitFor(new ProcessBuilder("flock", "--nonblock", LOCK, "true").start(), Duration.ofSeconds(10),
                "flock --nonblock " + LOCK);
        if (free != 0) {
            throw new AssertionError("the xtables lock is still taken after its holder " + holder.pid() + " ended");
        }
    }
}
