package dev.gatun.driver;

import dev.gatun.RetryableException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.nft.RulesetMonitor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Puts back what someone else removes of a driver's packet-filter state: it hears every
 * nftables notification of the host namespace, judges what each may have damaged
 * ({@link DamageTriage}), and runs the narrowest repair that covers it on a thread of its own
 * ({@link HealSchedule} says when and how much); a check every few seconds backs the
 * notifications up. Each repair runs through {@code alone}, so that the driver's own commits
 * are never half seen.
 */
final class Healer implements AutoCloseable {

    /** Runs a repair while no publish or change of the driver is under way. */
    @FunctionalInterface
    interface Exclusive {
        void run(Runnable repair);
    }

    private final Repairs repairs;
    private final Supplier<List<PortMapping>> wanted;
    private final Exclusive alone;
    private final Consumer<String> log;
    private volatile HealListener listener;
    /** The changes of one transaction by another process to gatun's table, until its generation ends it (monitor thread only). */
    private final List<RulesetEvent> outsideChanges = new ArrayList<>();
    /** Why the next repair runs: the first change seen since the last one; guarded by {@link #wakeLock}. */
    private String repairCause;
    private HealListener.Cause repairKind;
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition woken = wakeLock.newCondition();
    /** When to repair and how much; guarded by {@link #wakeLock}. */
    private final HealSchedule schedule;
    private volatile boolean running = true;
    /** Hears every notification, so that the driver plans from memory (null: it reads). */
    private final Consumer<RulesetEvent> follower;
    private final RulesetMonitor monitor;
    private final Thread thread;

    /**
     * Starts hearing {@code host}'s notifications (with a kernel queue of {@code eventQueueBytes},
     * 0: the default) and the healer's thread; nothing is repaired until {@link #repairAll}.
     * {@code wanted} gives the mappings to keep in place; {@code log} one line per thing put back
     * and per failed repair.
     */
    Healer(NetworkNamespace host, Repairs repairs, Supplier<List<PortMapping>> wanted, Exclusive alone,
           Consumer<String> log, int eventQueueBytes, long backstopMillis) {
        this.repairs = repairs;
        this.wanted = wanted;
        this.alone = alone;
        this.log = log;
        this.schedule = new HealSchedule(backstopMillis);
        // Before the monitor starts: it then hears every notification from before the first publish.
        this.follower = repairs.followRuleset();
        this.monitor = RulesetMonitor.start(host, this::onEvent, eventQueueBytes);
        this.thread = Thread.ofPlatform().daemon().name("gatun-healer").start(this::heal);
    }

    /** Tells {@code listener} of each outside change of gatun's table seen and of each repair. */
    void listen(HealListener listener) {
        this.listener = listener;
    }

    /** How many times the nftables notifications overran so far, each followed by a repair that read everything. */
    long overruns() {
        return monitor.overruns();
    }

    /** Repairs everything now, as at the start. */
    void repairAll() {
        repairNow(new HealSchedule.Repair(true, true, Set.of(), false), HealListener.Cause.START, "the start");
    }

    private void onEvent(RulesetEvent e) {
        if (follower != null) {
            follower.accept(e);
        }
        if (e.kind() == RulesetEvent.Kind.NEW_GENERATION || e.kind() == RulesetEvent.Kind.OVERRUN) {
            // Named only when something is reported: naming reads /proc, and every commit ends in a NEWGEN.
            reportOutsideChanges(e.kind() == RulesetEvent.Kind.NEW_GENERATION ? e::committerName : () -> "not known");
        }
        DamageTriage.Damage damage = DamageTriage.of(e);
        // byThisProcess asked last: it looks the committer up under /proc, and most events (the
        // elements a publish adds, another tool's sets) matter to no one. The driver's own
        // unpublish, network removal or repair is no damage, and a repair per unpublish would
        // hold every publish up (a repair takes milliseconds).
        if (damage == null || e.byThisProcess()) {
            return;
        }
        if (damage.own()) {
            outsideChanges.add(e);
        }
        wakeLock.lock();
        try {
            if (repairCause == null) {
                repairKind = damage.kind();
                repairCause = damage.cause();
            }
            if (damage.overrun()) {
                // Lost notifications, of any table: what is gone cannot be told, so all is read again.
                schedule.overran();
            } else if (damage.elementsOf() != null) {
                schedule.elementsRemoved(damage.elementsOf());
            } else {
                schedule.changed(damage.ownRemoval(), damage.foreign());
            }
            woken.signal();
        } finally {
            wakeLock.unlock();
        }
    }

    private void heal() {
        while (running) {
            boolean backstop;
            long settle;
            wakeLock.lock();
            try {
                backstop = !schedule.damageSuspected() && !woken.await(schedule.backstopMillis(), TimeUnit.MILLISECONDS);
                if (backstop && schedule.recheckingAfterOverrun() && repairCause == null) {
                    repairKind = HealListener.Cause.EVENTS_LOST;
                    repairCause = "the check after lost nftables notifications";
                }
                schedule.woke(backstop);
                settle = schedule.settleMillis();
            } catch (InterruptedException e) {
                return;
            } finally {
                wakeLock.unlock();
            }
            try {
                Thread.sleep(settle);
            } catch (InterruptedException e) {
                return;
            }
            // Legacy iptables sends no notifications: while it has a table, the backstop looks at every firewall.
            boolean poll = backstop && mustPollOtherFirewalls();
            HealSchedule.Repair repair;
            String cause;
            HealListener.Cause kind;
            wakeLock.lock();
            try {
                repair = schedule.take(poll);
                kind = repairCause != null ? repairKind
                        : backstop ? HealListener.Cause.PERIODIC_CHECK : HealListener.Cause.RETRY;
                cause = repairCause != null ? repairCause : backstop ? "the periodic check" : "a retry";
                repairCause = null;
            } finally {
                wakeLock.unlock();
            }
            if (!running) {
                return;
            }
            if (repair == null) {
                continue;
            }
            if (repair.eventsLost()) {
                log.accept("nftables notifications were lost (the event socket overran, ENOBUFS): reading the whole "
                        + "ruleset again");
            }
            repairNow(repair, kind, cause);
        }
    }

    /** Tells the heal listener of the transaction of another process that just ended, if it touched gatun's table. */
    private void reportOutsideChanges(Supplier<String> committer) {
        if (outsideChanges.isEmpty()) {
            return;
        }
        String by = committer.get();
        String what = OutsideChanges.describe(outsideChanges);
        outsideChanges.clear();
        HealListener l = listener;
        if (l != null) {
            l.changedOutside(what, by);
        }
    }

    /** Whether the backstop must read the other firewalls; when that cannot be told, it reads them. */
    private boolean mustPollOtherFirewalls() {
        try {
            return repairs.otherFirewallsNeedPolling();
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * Repairs now, logging what it put back; a failure is logged and tried again soon, not only
     * at the next notification (after a flood none may come) or the backstop. Other firewalls
     * are read only when the repair says so: that can cost a few processes. Of gatun's own table
     * it reads everything, or only the sets someone removed elements of, or nothing.
     */
    private void repairNow(HealSchedule.Repair r, HealListener.Cause kind, String cause) {
        alone.run(() -> {
            long t0 = System.nanoTime();
            try {
                List<String> repaired = repair(r);
                for (String line : repaired) {
                    log.accept("repaired " + line);
                }
                HealListener l = listener;
                if (l != null && !repaired.isEmpty()) {
                    l.repaired(List.copyOf(repaired), kind, cause, Duration.ofNanos(System.nanoTime() - t0));
                }
                wakeLock.lock();
                try {
                    schedule.succeeded();
                } finally {
                    wakeLock.unlock();
                }
            } catch (RuntimeException e) {
                log.accept("repair failed: " + e.getMessage());
                HealListener l = listener;
                if (l != null) {
                    l.repairFailed(e.getMessage(), kind, cause);
                }
                wakeLock.lock();
                try {
                    schedule.failed(r, e instanceof RetryableException);
                    woken.signal();
                } finally {
                    wakeLock.unlock();
                }
            }
        });
    }

    private List<String> repair(HealSchedule.Repair r) {
        List<String> repaired = new ArrayList<>();
        if (r.wholeTable()) {
            // The wanted list is made only for a repair of gatun's own table: the backstop's
            // check of the other firewalls every 5 s would make 100,000 mappings for nothing.
            List<PortMapping> keep = wanted.get();
            repaired.addAll(r.foreign() ? repairs.repair(keep) : repairs.repairOwnRuleset(keep));
        } else {
            if (!r.sets().isEmpty()) {
                repaired.addAll(repairs.repairElements(r.sets(), wanted.get()));
            }
            if (r.foreign()) {
                repaired.addAll(repairs.repairOtherFirewalls());
            }
        }
        return repaired;
    }

    /** Stops the thread (waiting up to 5 s for a repair under way) and the monitor. */
    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        monitor.close();
    }
}
