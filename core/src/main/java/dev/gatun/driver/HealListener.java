package dev.gatun.driver;

import java.time.Duration;
import java.util.List;

/**
 * Told what the self-healing driver saw and did: each transaction of another process that
 * changed gatun's table, and each repair (what it put back, why, how long it took). Called on
 * the driver's own threads; it must be quick and must not throw.
 */
public interface HealListener {

    /** Another process changed gatun's table in one transaction: what ({@code what}), and who ({@code by}). */
    void changedOutside(String what, String by);

    /** A repair put these things back (one line each), caused by {@code cause}, in {@code took}. */
    void repaired(List<String> lines, String cause, Duration took);

    /** A repair failed; it is tried again soon. */
    void repairFailed(String message, String cause);
}
