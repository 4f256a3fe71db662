package dev.gatun.driver;

import java.time.Duration;

/**
 * What the drivers of this process tell a metrics collector: each publish and unpublish a
 * long-running driver ran (how long, how many mappings, how it ended) and each commit of port
 * changes (how many requests it carried, how often it was planned again). Process-wide, like
 * the metrics it feeds: set once by the serve, before its driver takes requests; without one,
 * nothing is measured.
 */
public final class DriverStats {

    /** The collector's side. Called on the committing threads: quick, and never throwing. */
    public interface Observer {
        /** A publish or unpublish ({@code operation}) of {@code mappings} mappings took {@code took}; {@code failure} null when it succeeded. */
        void portsChanged(String operation, int mappings, Duration took, RuntimeException failure);

        /** One commit of {@code requests} requests, after {@code retries} plans again (stale reads, lost replies); {@code applied} false when it gave up or failed. */
        void committed(int requests, int retries, boolean applied);
    }

    private static volatile Observer observer;

    private DriverStats() {
    }

    public static void observe(Observer o) {
        observer = o;
    }

    /** The observer, or null. */
    static Observer observer() {
        return observer;
    }

    /** For the bridge driver's commit loop, in another package. */
    public static void committed(int requests, int retries, boolean applied) {
        Observer o = observer;
        if (o != null) {
            o.committed(requests, retries, applied);
        }
    }
}
