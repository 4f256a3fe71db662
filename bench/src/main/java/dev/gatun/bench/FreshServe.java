package dev.gatun.bench;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A serve just started, as a CI host's serve is the morning after a reboot: from its ready line
 * on, with no warm-up, forwarded publishes are sent to it by the C client's own code
 * ({@code serve_timed}, started before the serve, so neither its process start nor anything of
 * this JVM is in a sample), each undone by an unpublish that is not timed, and the 1st, 10th and
 * 100th publish are reported against the same serve's warm figure (the median of the last
 * {@link #WARM_SAMPLES} of {@code requests} pairs). Once with a publish of one port, once in
 * another fresh serve with a 32-port container's; the serve's memory idle (right after ready,
 * before any request) and loaded (after the pairs) beside them.
 *
 * <p>Until 2026-12-05 this JVM sent them itself: its own send path was as new as the serve's, and
 * a client JVM just started takes 0.3 to 0.7 ms of the 10th request by itself (measured against
 * a stand-in server answering at once), about the whole warm figure; it also waited for the
 * connection's close, which the C client does not.
 */
final class FreshServe {

    /** The targets: the 10th within 2x of warm, the 100th within 1.3x. */
    static final double TENTH_TARGET = 2.0;
    static final double HUNDREDTH_TARGET = 1.3;
    private static final int WARM_SAMPLES = 200;

    private FreshServe() {}

    /** Both shapes, each in a serve of its own in a namespace of its own, {@code requests} pairs each, sent by {@code client} (serve_timed). */
    static Map<String, Object> measure(Path launcher, Path client, int requests) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("one_port", shape(launcher, client, 1, requests));
        m.put("ports_32", shape(launcher, client, 32, requests));
        m.put("tenth_target_over_warm", TENTH_TARGET);
        m.put("hundredth_target_over_warm", HUNDREDTH_TARGET);
        return m;
    }

    private static Map<String, Object> shape(Path launcher, Path client, int ports, int requests) {
        String name = "gatun-bench-" + ProcessHandle.current().pid() + "-fresh-" + ports;
        NetworkNamespace ns = NamedNamespaces.create(name);
        try {
            Subjects.OnGatunTable.createNetwork(ns);
            // Inside the namespace, the client finds its serve as a command typed there does (no --netns).
            try (InNamespace sender = new InNamespace(client, ns.path()); Serve serve = Serve.start(launcher, ns)) {
                Serve.Memory idle = serve.memory();
                List<Long> micros = new ArrayList<>(requests);
                for (int i = 0; i < requests; i++) {
                    // New host ports for each pair (as a CI host's containers get), the same command line's shape.
                    int first = 20_000 + i * ports % 40_000;
                    micros.add(sender.time(command("publish", first, ports), null));
                    sender.time(command("unpublish", first, ports), null);
                }
                Serve.Memory loaded = serve.memory();
                int ran = serve.stop();
                if (ran != 2 * requests) {
                    throw new IllegalStateException("the fresh serve ran " + ran + " of " + 2 * requests + " commands");
                }
                long warm = Stats.median(micros.subList(Math.max(0, requests - WARM_SAMPLES), requests));
                long tenth = micros.get(Math.min(9, requests - 1));
                long hundredth = micros.get(Math.min(99, requests - 1));
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ports", ports);
                m.put("first_us", micros.getFirst());
                m.put("tenth_us", tenth);
                m.put("hundredth_us", hundredth);
                m.put("warm_us", warm);
                m.put("warm_after_requests", requests);
                m.put("tenth_over_warm", ratio(tenth, warm));
                m.put("hundredth_over_warm", ratio(hundredth, warm));
                m.put("tenth_met", tenth <= TENTH_TARGET * warm);
                m.put("hundredth_met", hundredth <= HUNDREDTH_TARGET * warm);
                // One request is a lottery here (a young collection or a compilation lands on it now
                // and then): the medians of the ten around the 10th and the twenty around the 100th
                // say whether the serve is there yet, beside the single figures the targets name.
                m.put("around_tenth_us", around(micros, 5, 15));
                m.put("around_hundredth_us", around(micros, 90, 110));
                m.put("idle_rss_kb", idle.rssKb());
                m.put("loaded_rss_kb", loaded.rssKb());
                m.put("loaded_hwm_kb", loaded.hwmKb());
                m.put("first_20_us", List.copyOf(micros.subList(0, Math.min(20, requests))));
                return m;
            }
        } finally {
            NamedNamespaces.delete(name);
        }
    }

    /** {@code verb} of ports {@code first} to {@code first + count - 1}, each to itself, by owner "fresh". */
    private static List<String> command(String verb, int first, int count) {
        List<String> cmd = new ArrayList<>(List.of(verb, "n1", Subjects.CONTAINER, "--owner", "fresh"));
        for (int p = first; p < first + count; p++) {
            cmd.add("-p");
            cmd.add(p + ":" + p);
        }
        return cmd;
    }

    /** The median of samples {@code from} (inclusive) to {@code to} (exclusive), or -1 when there are not that many. */
    private static long around(List<Long> micros, int from, int to) {
        return micros.size() < to ? -1 : Stats.median(micros.subList(from, to));
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0 : Math.round(100.0 * a / b) / 100.0;
    }
}
