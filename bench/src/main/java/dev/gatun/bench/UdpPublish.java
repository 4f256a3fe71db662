package dev.gatun.bench;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * A publish beside a large conntrack table. A UDP publish deletes the entries of its port that no
 * dnat translated (a client that began before it), and walks the table to find them only when
 * gatun's table heard untranslated UDP go to that port ({@code udpheard}); else it costs one
 * lookup more than a TCP publish. Measured with gatun's in-process driver in one namespace, in
 * blocks that turn the table's state: {@code quiet}, no conntrack entry on the host (the kernel
 * keeps every namespace's in one table, and a walk reads them all, so no other namespace may hold
 * any either); {@code busy}, {@code entries} unrelated UDP entries inserted with one
 * {@code conntrack -R} of a file (from distinct sources to 10.9.9.9:53, untranslated and
 * unanswered, the kind a walk or udpheard's seed has to read); {@code heard}, the same entries and
 * the published port put in udpheard with nft, as a waiting client would have put it there (the
 * walk such a client costs). Each sample is one publish of one mapping (see {@link #sample}).
 */
final class UdpPublish {

    private static final InetAddress CONTAINER = InetAddress.ofLiteral("10.88.0.2");
    private static final int PORT = 5353;
    /** Unmeasured publishes of each protocol first: what runs warm, as a serve's driver does. */
    private static final int WARM_UP = 2_000;
    /** Blocks of the three states, in turn: a machine whose speed drifts slows each state alike. */
    private static final int BLOCKS = 5;

    private UdpPublish() {}

    /**
     * {@code rounds} samples per state and protocol ({@code rounds / 2} for heard, each a walk),
     * in {@link #BLOCKS} blocks (fewer when rounds are fewer), after {@link #WARM_UP} unmeasured
     * publishes of each protocol and a wait until this JVM's JIT is idle.
     */
    static Map<String, Object> measure(int entries, int rounds) {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, List<Long>> samples = new LinkedHashMap<>();
        NetworkNamespace ns = NamedNamespaces.create("gatun-bench-udp-" + ProcessHandle.current().pid());
        try (GatunDriver driver = Gatun.open(ns, "nftables")) {
            driver.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse("10.88.0.0/16")).build());
            for (int i = 0; i < WARM_UP / 50; i++) {
                sample(driver, "warm-up", 50, new LinkedHashMap<>());
            }
            Worker.awaitIdleJit();
            int blocks = Math.max(1, Math.min(BLOCKS, rounds / 10)); // at least 10 samples a block: its first runs cold
            for (int block = 0; block < blocks; block++) {
                int perBlock = rounds / blocks + (block < rounds % blocks ? 1 : 0);
                sample(driver, "quiet", perBlock, samples);
                insertEntries(ns, entries);
                sample(driver, "busy", perBlock, samples);
                String heardPorts = IntStream.range(PORT, PORT + perBlock).mapToObj(Integer::toString)
                        .collect(Collectors.joining(", ", "{ ", " }"));
                tool(ns, List.of("nft", "add", "element", "inet", "gatun", "udpheard", heardPorts));
                sample(driver, "heard", Math.max(1, perBlock / 2), samples);
                tool(ns, List.of("nft", "flush", "set", "inet", "gatun", "udpheard"));
                tool(ns, List.of("conntrack", "-F"));
            }
        } finally {
            NamedNamespaces.delete(ns.name());
        }
        m.put("conntrack_entries", entries);
        m.put("rounds", rounds);
        samples.forEach((k, v) -> m.put(k + "_median_us", Stats.median(v)));
        m.put("udp_busy_over_quiet", ratio(samples.get("busy_udp"), samples.get("quiet_udp")));
        m.put("tcp_busy_over_quiet", ratio(samples.get("busy_tcp"), samples.get("quiet_tcp")));
        m.put("udp_over_tcp_quiet", ratio(samples.get("quiet_udp"), samples.get("quiet_tcp")));
        m.put("udp_heard_over_quiet", ratio(samples.get("heard_udp"), samples.get("quiet_udp")));
        return m;
    }

    /**
     * {@code count} samples of each protocol in the table's state {@code state}: publishes of one
     * mapping each, on ports from {@link #PORT} on, each timed; then one unpublish of them all, not
     * timed. One unpublish, not one per sample: a UDP unpublish walks the conntrack table to delete
     * the flows of its mappings, and the sample after each walk would start with cold caches.
     */
    private static void sample(GatunDriver driver, String state, int count, Map<String, List<Long>> samples) {
        for (String protocol : List.of("udp", "tcp")) {
            List<PortSpec> all = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                List<PortSpec> one = List.of(PortSpec.parse((PORT + i) + ":53/" + protocol));
                long start = System.nanoTime();
                List<PortMapping> made = driver.publish(new PortRequest("n1", CONTAINER, one, "bench"));
                samples.computeIfAbsent(state + "_" + protocol, k -> new ArrayList<>()).add((System.nanoTime() - start) / 1000);
                if (made.size() != 1) {
                    throw new IllegalStateException("gatun published " + made.size() + " mappings of one");
                }
                all.addAll(one);
            }
            driver.unpublish(new PortRequest("n1", CONTAINER, all, "bench"));
        }
    }

    private static double ratio(List<Long> a, List<Long> b) {
        return Math.round(100.0 * Stats.median(a) / Math.max(1, Stats.median(b))) / 100.0;
    }

    /**
     * {@code count} UDP entries from distinct sources to 10.9.9.9:53, untranslated and unanswered,
     * for an hour: one {@code conntrack -R} of a file, which takes some 100,000 a second here.
     */
    private static void insertEntries(NetworkNamespace ns, int count) {
        if (count == 0) {
            return;
        }
        try {
            Path file = Files.createTempFile("gatun-bench-conntrack", ".txt");
            try {
                StringBuilder lines = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    lines.append("-I -p udp -s 10.").append(100 + i / 62500).append('.').append(i / 250 % 250).append('.')
                            .append(i % 250 + 1).append(" -d 10.9.9.9 --sport ").append(1024 + i % 60000)
                            .append(" --dport 53 -t 3600\n");
                }
                Files.writeString(file, lines);
                tool(ns, List.of("conntrack", "-R", file.toString()));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String counted = tool(ns, List.of("conntrack", "-C")).strip();
        if (Integer.parseInt(counted) < count) {
            throw new IllegalStateException("conntrack holds " + counted + " entries in " + ns.describe() + ", not " + count);
        }
    }

    /** Runs a tool in {@code ns} (set-up, not measured); its output. */
    private static String tool(NetworkNamespace ns, List<String> argv) {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "--net=" + ns.path()));
        cmd.addAll(argv);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", argv) + " in " + ns.describe() + " failed: " + out.strip());
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
