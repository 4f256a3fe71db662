package dev.gatun.driver;

import java.util.HashSet;
import java.util.Set;

/**
 * When {@link SelfHealingDriver} repairs, and how much: what the notifications since the last
 * repair suspect, the backstop that looks when none came, and the backoff while repairs fail.
 * It only decides; the healer's thread waits, sleeps and repairs. Not thread-safe: the healer
 * guards it with its lock.
 */
final class HealSchedule {

    /** A flush arrives as many notifications: wait this long for the rest, then repair once. */
    static final long SETTLE_MILLIS = 20;
    /**
     * Legacy iptables sends no notifications, so while it has a table every backstop reads the
     * other firewalls; else they notify like gatun's own table, and the backstop reads nothing
     * but, only every this many times, gatun's own table whole, in case (an overrun says when
     * notifications were lost): with 100,000 mappings that read is half a second of CPU and some
     * 130 MiB of garbage, which every 5 s cost a serve a tenth of a core. An idle serve on a host
     * without legacy iptables is idle: no reads, no garbage, nothing for its JIT to compile.
     */
    static final int OWN_TABLE_EVERY = 12;
    /**
     * A failed repair is tried again this soon (a dump the kernel kept interrupting during a
     * flood, other processes committing to the end), waiting twice as long each time it fails
     * again: up to a second while it fails retryably, else up to {@link #BACKSTOP_MILLIS}.
     */
    static final long FIRST_RETRY_MILLIS = 100;
    static final long MAX_RETRY_DELAY_MILLIS = 1_000;
    /** How often the backstop looks when no notification came. */
    static final long BACKSTOP_MILLIS = 5_000;
    /**
     * After a repair that followed lost notifications, everything is read once more when none
     * came for this long: the kernel sends a transaction's notifications while it applies it,
     * so the read that the overrun woke may have run before the end of the very transaction
     * whose notifications overran (a flood's last deletions, lost with the rest).
     */
    static final long RECHECK_AFTER_OVERRUN_MILLIS = 250;

    /** One repair: other firewalls too, gatun's whole table, or only these sets of it; and whether events were lost. */
    record Repair(boolean foreign, boolean wholeTable, Set<String> sets, boolean eventsLost) {}

    private final long backstopMillis;
    private boolean damageSuspected;
    /** Another table changed (a firewall reload, dockerd rebuilding its chains): check what gatun added to it. */
    private boolean foreignChanged;
    /** Something of gatun's own table other than elements was removed, or events were lost: read all of it. */
    private boolean wholeTable;
    /** Sets of gatun's own table that someone removed elements from. */
    private final Set<String> damagedSets = new HashSet<>();
    /** The monitor lost notifications (ENOBUFS): the next repair reads everything, and says why once. */
    private boolean overran;
    /** A repair read everything after lost notifications: once they are quiet, it is read again. */
    private boolean recheckAfterOverrun;
    /** How much longer than usual the next repair waits: grows while repairs fail. */
    private long retryDelayMillis;
    /** Backstops since the last that read gatun's own table. */
    private int backstopsWithoutOwnTable;

    HealSchedule(long backstopMillis) {
        this.backstopMillis = backstopMillis;
    }

    /** Whether a repair is due now, without waiting for the backstop. */
    boolean damageSuspected() {
        return damageSuspected;
    }

    /** Someone removed elements of {@code set} of gatun's own table. */
    void elementsRemoved(String set) {
        damagedSets.add(set);
        damageSuspected = true;
    }

    /** Someone changed gatun's own table otherwise (a rule, a chain, the table), or another table ({@code foreign}). */
    void changed(boolean own, boolean foreign) {
        wholeTable |= own;
        foreignChanged |= foreign;
        damageSuspected = true;
    }

    /** The notifications overran: anything of any table may be gone. */
    void overran() {
        overran = true;
        wholeTable = true;
        foreignChanged = true;
        damageSuspected = true;
    }

    /** How long the healer waits for a notification before the backstop looks. */
    long backstopMillis() {
        return recheckAfterOverrun ? Math.min(RECHECK_AFTER_OVERRUN_MILLIS, backstopMillis) : backstopMillis;
    }

    /** Whether the next backstop is the read again after lost notifications. */
    boolean recheckingAfterOverrun() {
        return recheckAfterOverrun;
    }

    /** How long the healer waits once woken, for the rest of a flush (and while repairs fail, longer). */
    long settleMillis() {
        return SETTLE_MILLIS + retryDelayMillis;
    }

    /** The healer woke: by a notification, or by the backstop when none came. */
    void woke(boolean byBackstop) {
        if (byBackstop && recheckAfterOverrun) {
            recheckAfterOverrun = false;
            wholeTable = true;
            foreignChanged = true;
        } else if (byBackstop && ++backstopsWithoutOwnTable >= OWN_TABLE_EVERY) {
            wholeTable = true;
        }
        damageSuspected = false;
    }

    /**
     * The repair to run now, taking what was suspected since the last one (null: nothing);
     * {@code pollForeign}: a backstop on a host whose other firewalls send no notifications.
     */
    Repair take(boolean pollForeign) {
        Repair r = new Repair(foreignChanged || pollForeign, wholeTable, Set.copyOf(damagedSets), overran);
        if (wholeTable) {
            backstopsWithoutOwnTable = 0;
        }
        foreignChanged = false;
        wholeTable = false;
        damagedSets.clear();
        overran = false;
        recheckAfterOverrun |= r.eventsLost();
        return r.foreign() || r.wholeTable() || !r.sets().isEmpty() ? r : null;
    }

    /** The repair put everything back. */
    void succeeded() {
        retryDelayMillis = 0;
    }

    /**
     * The repair failed: it is tried again in full (what failed may not have been what was
     * suspected), soon while the failure may go away, less and less often otherwise.
     */
    void failed(Repair r, boolean retryable) {
        long most = retryable ? MAX_RETRY_DELAY_MILLIS : BACKSTOP_MILLIS;
        retryDelayMillis = Math.min(most, Math.max(FIRST_RETRY_MILLIS, retryDelayMillis * 2));
        wholeTable = true;
        foreignChanged |= r.foreign();
        damageSuspected = true;
    }
}
