package dev.gatun.bench;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
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
 * {@link #WARM_SAMPLES} of {@code requests} pairs). With a publish of one port, and in other
 * fresh serves with a 32-port container's; the serve's memory idle (right after ready, before
 * any request) and loaded (after the pairs) beside them, and the places where each serve's
 * compiled code trapped at its requests ({@link JitTraps}): its log of collections and
 * deoptimizations is on for that (a line per collection and per trap).
 *
 * <p>Several fresh serves of each shape, in turns: the 10th or the 100th request of one serve
 * is a lottery on two cores (a young collection, some 1 ms every 10 to 20 ms of requests, or a
 * compilation lands on it now and then, and one run read the 10th at 1.01x and the next at
 * 3.22x), so the figures and the targets' verdicts are the medians over the serves, each
 * serve's own ratio beside them.
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

    /**
     * One serve's run: its timed publishes in order, its warm figure, its memory, and the places
     * its compiled code trapped after the warm-up (null: not known; see {@link JitTraps}).
     */
    record Run(List<Long> micros, long warm, long idleRssKb, long loadedRssKb, long loadedHwmKb, List<String> traps) {
        long at(int index) {
            return micros.get(Math.min(index, micros.size() - 1));
        }

        double over(int index) {
            return ratio(at(index), warm);
        }
    }

    private FreshServe() {}

    /**
     * Both shapes, {@code serves} fresh serves of each, in turns, each in a namespace of its own,
     * {@code requests} pairs each, sent by {@code client} (serve_timed); the harness has checked
     * both counts (Harness.checkCounts).
     */
    static Map<String, Object> measure(Path launcher, Path client, int requests, int serves) {
        List<Run> onePort = new ArrayList<>();
        List<Run> ports32 = new ArrayList<>();
        for (int i = 0; i < serves; i++) {
            // In turns, so that the machine's drift over the minutes touches both shapes alike.
            onePort.add(run(launcher, client, 1, requests));
            ports32.add(run(launcher, client, 32, requests));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("one_port", summary(1, requests, onePort));
        m.put("ports_32", summary(32, requests, ports32));
        m.put("tenth_target_over_warm", TENTH_TARGET);
        m.put("hundredth_target_over_warm", HUNDREDTH_TARGET);
        return m;
    }

    /** The medians over the serves of one shape, each serve's ratios and first 20 beside them. */
    static Map<String, Object> summary(int ports, int requests, List<Run> runs) {
        double tenth = medianOf(runs.stream().map(r -> r.over(9)).toList());
        double hundredth = medianOf(runs.stream().map(r -> r.over(99)).toList());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ports", ports);
        m.put("serves", runs.size());
        m.put("first_us", Stats.median(runs.stream().map(r -> r.at(0)).toList()));
        m.put("tenth_us", Stats.median(runs.stream().map(r -> r.at(9)).toList()));
        m.put("hundredth_us", Stats.median(runs.stream().map(r -> r.at(99)).toList()));
        m.put("warm_us", Stats.median(runs.stream().map(Run::warm).toList()));
        m.put("warm_after_requests", requests);
        m.put("tenth_over_warm", tenth);
        m.put("hundredth_over_warm", hundredth);
        m.put("tenth_met", tenth <= TENTH_TARGET);
        m.put("hundredth_met", hundredth <= HUNDREDTH_TARGET);
        m.put("tenth_over_warm_each", runs.stream().map(r -> r.over(9)).toList());
        m.put("hundredth_over_warm_each", runs.stream().map(r -> r.over(99)).toList());
        // The medians of the ten around the 10th and the twenty around the 100th say whether a
        // serve is there yet, beside the single requests the targets name.
        m.put("around_tenth_us", Stats.median(runs.stream().map(r -> around(r.micros(), 5, 15)).toList()));
        m.put("around_hundredth_us", Stats.median(runs.stream().map(r -> around(r.micros(), 90, 110)).toList()));
        m.put("idle_rss_kb", Stats.median(runs.stream().map(Run::idleRssKb).toList()));
        m.put("loaded_rss_kb", Stats.median(runs.stream().map(Run::loadedRssKb).toList()));
        m.put("loaded_hwm_kb", Stats.median(runs.stream().map(Run::loadedHwmKb).toList()));
        m.put("traps_after_ready_each", runs.stream().map(r -> r.traps() == null ? null : r.traps().size()).toList());
        m.put("trapped_each", runs.stream().map(Run::traps).toList());
        m.put("first_20_us_each", runs.stream().map(r -> List.copyOf(r.micros().subList(0, Math.min(20, r.micros().size()))))
                .toList());
        return m;
    }

    /** One fresh serve of one shape, in a namespace of its own, removed again. */
    private static Run run(Path launcher, Path client, int ports, int requests) {
        Path jitLogs;
        try {
            jitLogs = Files.createTempDirectory("gatun-bench-jit-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make a directory for the fresh serve's JIT log", e);
        }
        try {
            return runLogging(launcher, client, ports, requests, jitLogs);
        } finally {
            removeAll(jitLogs);
        }
    }

    private static Run runLogging(Path launcher, Path client, int ports, int requests, Path jitLogs) {
        String name = "gatun-bench-" + ProcessHandle.current().pid() + "-fresh-" + ports;
        NetworkNamespace ns = NamedNamespaces.create(name);
        try {
            Subjects.OnGatunTable.createNetwork(ns);
            // Inside the namespace, the client finds its serve as a command typed there does (no --netns).
            try (InNamespace sender = new InNamespace(client, ns.path());
                 Serve serve = Serve.startLoggingTraps(launcher, ns, jitLogs)) {
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
                // Read once it has exited: its JVM has written the whole log then. Without its warm-up
                // the first System.gc() would be a later one: not known then.
                boolean warmedUp = serve.log().stream().anyMatch(l -> l.contains("warmed up:"));
                return new Run(List.copyOf(micros), warm, idle.rssKb(), loaded.rssKb(), loaded.hwmKb(),
                        warmedUp ? JitTraps.ofServe(jitLogs, serve.pid()) : null);
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

    /**
     * Removes {@code dir} and the logs in it (a training run's too); a failure is said, not
     * thrown, so that it never hides the run's own.
     */
    private static void removeAll(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException | UncheckedIOException e) {
            System.err.println("gatun bench: could not remove the fresh serve's JIT logs in " + dir + ": " + e.getMessage());
        }
    }

    private static double medianOf(List<Double> values) {
        List<Double> s = values.stream().sorted().toList();
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : Math.round(50.0 * (s.get(n / 2 - 1) + s.get(n / 2))) / 100.0;
    }

    private static double ratio(long a, long b) {
        return b == 0 ? 0 : Math.round(100.0 * a / b) / 100.0;
    }
}
