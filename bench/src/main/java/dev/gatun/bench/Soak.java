package dev.gatun.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The soak ({@code gatun bench --soak}): publish/unpublish cycles through a {@code gatun serve}
 * from many clients at once, each request as the C client sends it, while the serve's resident
 * memory, open descriptors and threads and the kernel's count of gatun's set and map elements
 * are sampled: at its start, at the baseline (after a warm-up, once idle), every tenth of the
 * cycles, and at the end once the serve is idle again. Each must end within 10% of its baseline,
 * and nothing may be left behind: not an element, a link, the namespace, the serve or its socket.
 */
final class Soak {

    /** How far from its baseline a figure may end. */
    static final double TOLERANCE = 0.10;
    static final int DEFAULT_CYCLES = 200_000;
    static final int DEFAULT_CLIENTS = 16;
    /** Each client has host ports of its own, 1,000 from 20000 + 1000 c. */
    static final int MAX_CLIENTS = 40;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Soak() {}

    /** One look at the serve and its namespace. */
    record Sample(String when, long cycles, long seconds, long rssKb, long fds, long threads, long elements, long links) {
        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("when", when);
            m.put("cycles", cycles);
            m.put("seconds", seconds);
            m.put("rss_kb", rssKb);
            m.put("fds", fds);
            m.put("threads", threads);
            m.put("elements", elements);
            m.put("links", links);
            return m;
        }
    }

    /** Whether {@code what} ended within {@link #TOLERANCE} of its baseline. */
    record Verdict(String what, long baseline, long end, boolean within) {
        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("what", what);
            m.put("baseline", baseline);
            m.put("end", end);
            m.put("within_10_percent", within);
            return m;
        }
    }

    /** Whether {@code value} is within {@code TOLERANCE} of {@code baseline} (a baseline of 0 allows only 0). */
    static boolean within(long baseline, long value) {
        return Math.abs(value - baseline) <= TOLERANCE * Math.abs(baseline);
    }

    /** Each figure of {@code end} against {@code baseline}. */
    static List<Verdict> verdicts(Sample baseline, Sample end) {
        return List.of(verdict("rss_kb", baseline.rssKb, end.rssKb), verdict("fds", baseline.fds, end.fds),
                verdict("threads", baseline.threads, end.threads), verdict("elements", baseline.elements, end.elements),
                verdict("links", baseline.links, end.links));
    }

    private static Verdict verdict(String what, long baseline, long end) {
        return new Verdict(what, baseline, end, within(baseline, end));
    }

    /**
     * A number field of /proc/PID/status ("VmRSS:	   93012 kB" gives 93012, "Threads:	27" gives
     * 27); fails when the field is missing.
     */
    static long statusField(String status, String field) {
        for (String line : status.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).equals(field)) {
                String value = line.substring(colon + 1).strip();
                int space = value.indexOf(' ');
                return Long.parseLong(space < 0 ? value : value.substring(0, space));
            }
        }
        throw new IllegalArgumentException("no " + field + " in /proc/PID/status");
    }

    /** The elements of every set and map in an {@code nft -j list table ...} document. */
    static long elementCount(String nftJson) {
        JsonNode doc;
        try {
            doc = JSON.readTree(nftJson);
        } catch (IOException e) {
            throw new IllegalArgumentException("nft printed no JSON: " + nftJson.lines().limit(3).toList(), e);
        }
        long n = 0;
        for (JsonNode o : doc.path("nftables")) {
            for (String kind : List.of("set", "map")) {
                n += o.path(kind).path("elem").size();
            }
        }
        return n;
    }

    /**
     * Runs {@code cycles} publish/unpublish cycles from {@code clients} clients through a serve
     * started by {@code launcher} in a fresh namespace, and reports the samples and verdicts.
     * Throws when a request fails or something is left behind.
     */
    static Map<String, Object> run(Path launcher, Path timer, int cycles, int clients) throws Exception {
        if (cycles < 1 || clients < 1 || clients > MAX_CLIENTS) {
            throw new IllegalArgumentException("--cycles must be at least 1 and --clients 1 to " + MAX_CLIENTS);
        }
        long started = System.nanoTime();
        String name = "gatun-bench-" + ProcessHandle.current().pid() + "-soak";
        NetworkNamespace ns = NamedNamespaces.create(name);
        Map<String, Object> m = new LinkedHashMap<>();
        List<Sample> samples = new ArrayList<>();
        long pid;
        Path socket;
        try (InNamespace inside = new InNamespace(timer, ns.path())) {
            Subjects.OnGatunTable.createNetwork(ns);
            try (Serve serve = Serve.start(launcher, ns)) {
                pid = serve.pid();
                socket = serve.socket;
                serve.awaitIdle(4, 500, 30_000);
                samples.add(sample("start", 0, started, serve, inside));
                // The baseline is a serve that has run the cycle's code (class loading, the JIT's
                // first compilations, the heap's first growth), as a long-running serve has.
                int warmUp = Math.min(2_000, Math.max(cycles / 10, 1));
                cycles(serve, clients, warmUp, null, () -> {});
                serve.awaitIdle(4, 500, 60_000);
                samples.add(sample("baseline", warmUp, started, serve, inside));
                AtomicLong done = new AtomicLong();
                long[] nextMark = {cycles / 10};
                int[] mark = {1};
                Runnable sampler = () -> {
                    while (mark[0] < 10 && done.get() >= nextMark[0]) {
                        samples.add(sample(mark[0] * 10 + "%", done.get(), started, serve, inside));
                        mark[0]++;
                        nextMark[0] = (long) cycles * mark[0] / 10;
                    }
                };
                cycles(serve, clients, cycles, done, sampler);
                samples.add(sample("100%", cycles, started, serve, inside));
                // The end: idle again (the heap keeper's collection, the glibc trim every 2 s).
                sleep(10_000);
                serve.awaitIdle(4, 500, 60_000);
                Sample end = sample("end, idle", cycles, started, serve, inside);
                samples.add(end);
                int ran = serve.stop();
                int expected = 2 * (warmUp + cycles);
                if (ran != expected) {
                    throw new IllegalStateException("the serve's log shows " + ran + " commands, not " + expected);
                }
                List<Verdict> verdicts = verdicts(samples.get(1), end);
                m.put("cycles", cycles);
                m.put("warm_up_cycles", warmUp);
                m.put("clients", clients);
                m.put("requests", expected);
                m.put("samples", samples.stream().map(Sample::toMap).toList());
                m.put("verdicts", verdicts.stream().map(Verdict::toMap).toList());
                m.put("all_within_10_percent", verdicts.stream().allMatch(Verdict::within));
                m.put("elements_as_at_baseline", end.elements == samples.get(1).elements);
            }
        } finally {
            NamedNamespaces.delete(name);
        }
        // Nothing left behind: the namespace, the serve, its socket.
        List<String> left = new ArrayList<>();
        if (Files.exists(Path.of("/run/netns", name))) {
            left.add("namespace " + name);
        }
        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            left.add("serve process " + pid);
        }
        if (Files.exists(socket)) {
            left.add("socket " + socket);
        }
        m.put("left_behind", left);
        m.put("seconds", (System.nanoTime() - started) / 1_000_000_000L);
        return m;
    }

    /**
     * {@code count} cycles from {@code clients} clients: client c publishes one port of its own
     * range (from 20000 + 1000 c) to its own address, then unpublishes it; {@code sampler} runs
     * on this thread while they work.
     */
    private static void cycles(Serve serve, int clients, int count, AtomicLong done, Runnable sampler)
            throws Exception {
        AtomicLong next = new AtomicLong();
        AtomicLong finished = done == null ? new AtomicLong() : done;
        try (ExecutorService pool = Executors.newFixedThreadPool(clients)) {
            List<Future<?>> running = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                int client = c;
                running.add(pool.submit(() -> {
                    String ip = "10.88.1." + (2 + client);
                    String owner = "soak-" + client;
                    for (long i; (i = next.getAndIncrement()) < count; ) {
                        String port = Integer.toString(20_000 + 1000 * client + (int) (i % 1000));
                        serve.send(List.of("publish", "n1", ip, "-p", port + ":80", "--owner", owner));
                        serve.send(List.of("unpublish", "n1", ip, "-p", port + ":80", "--owner", owner));
                        finished.incrementAndGet();
                    }
                    return null;
                }));
            }
            while (!running.stream().allMatch(Future::isDone)) {
                sampler.run();
                Thread.sleep(200);
            }
            for (Future<?> f : running) {
                f.get();
            }
        }
    }

    private static Sample sample(String when, long cycles, long started, Serve serve, InNamespace inside) {
        long pid = serve.pid();
        String status;
        long fds;
        try (Stream<Path> open = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = open.count();
            status = Files.readString(Path.of("/proc/" + pid + "/status"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/" + pid + ": " + e.getMessage(), e);
        }
        InNamespace.Run nft = inside.run(List.of("nft", "-j", "list", "table", "inet", "gatun"), null);
        if (nft.status() != 0) {
            throw new IllegalStateException("nft -j list table inet gatun exited " + nft.status() + ": " + nft.output());
        }
        InNamespace.Run links = inside.run(List.of("ip", "-o", "link", "show"), null);
        return new Sample(when, cycles, (System.nanoTime() - started) / 1_000_000_000L, statusField(status, "VmRSS"), fds,
                statusField(status, "Threads"), elementCount(nft.output()), links.output().lines().count());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The report as text: one line per sample, then the verdicts. */
    static String text(Map<String, Object> m) {
        StringBuilder b = new StringBuilder();
        b.append("soak: ").append(m.get("cycles")).append(" publish/unpublish cycles from ").append(m.get("clients"))
                .append(" clients through gatun serve (").append(m.get("requests")).append(" requests, after ")
                .append(m.get("warm_up_cycles")).append(" warm-up cycles), ").append(m.get("seconds")).append(" s\n");
        b.append(String.format("%-10s %9s %7s %10s %5s %8s %9s %6s%n", "when", "cycles", "s", "VmRSS KiB", "fds", "threads",
                "elements", "links"));
        for (Object o : (List<?>) m.get("samples")) {
            Map<?, ?> s = (Map<?, ?>) o;
            b.append(String.format("%-10s %9s %7s %10s %5s %8s %9s %6s%n", s.get("when"), s.get("cycles"), s.get("seconds"),
                    s.get("rss_kb"), s.get("fds"), s.get("threads"), s.get("elements"), s.get("links")));
        }
        for (Object o : (List<?>) m.get("verdicts")) {
            Map<?, ?> v = (Map<?, ?>) o;
            b.append(v.get("what")).append(": baseline ").append(v.get("baseline")).append(", end ").append(v.get("end"))
                    .append(Boolean.TRUE.equals(v.get("within_10_percent")) ? ", within 10%" : ", NOT within 10%").append('\n');
        }
        b.append("left behind: ").append(((List<?>) m.get("left_behind")).isEmpty() ? "nothing" : m.get("left_behind"))
                .append('\n');
        return b.toString();
    }
}
