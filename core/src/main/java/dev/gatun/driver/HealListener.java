package dev.gatun.driver;

import java.time.Duration;
import java.util.List;

/**
 * Told what the self-healing driver saw and did: each transaction of another process that
 * changed gatun's table, and each repair (what it put back, why, how long it took). Called on
 * the driver's own threads; it must be quick and must not throw.
 */
public interface HealListener {

    /** Why a repair ran, in few enough kinds to count by. */
    enum Cause { START, OWN_TABLE, OTHER_TABLE, EVENTS_LOST, PERIODIC_CHECK, RETRY }

    /** Another process changed gatun's table in one transaction: what ({@code what}), and who ({@code by}). */
    void changedOutside(String what, String by);

    /** A repair put these things back (one line each), caused by {@code cause} (of kind {@code kind}), in {@code took}. */
    void repaired(List<String> lines, Cause kind, String cause, Duration took);

    /** A repair failed; it is tried again soon. */
    void repairFailed(String message, Cause kind, String cause);

    /** Both listeners, {@code first} first; {@code second} may be null. */
    static HealListener both(HealListener first, HealListener second) {
        if (second == null) {
            return first;
        }
        return new HealListener() {
            @Override
            public void changedOutside(String what, String by) {
                first.changedOutside(what, by);
                second.changedOutside(what, by);
            }

            @Override
            public void repaired(List<String> lines, Cause kind, String cause, Duration took) {
                first.repaired(lines, kind, cause, took);
                second.repaired(lines, kind, cause, took);
            }

            @Override
            public void repairFailed(String message, Cause kind, String cause) {
                first.repairFailed(message, kind, cause);
                second.repairFailed(message, kind, cause);
            }
        };
    }
}
