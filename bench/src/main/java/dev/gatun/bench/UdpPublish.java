package dev.gatun.bench;

import dev.gatun.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
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

/**
 * A publish beside a large conntrack table. A UDP publish deletes the entries of its port that no
 * dnat translated (a client that began before it), and walks the table to find them only when
 * gatun's table heard untranslated UDP go to that port ({@code udpheard}); else it costs one
 * lookup more than a TCP publish. Measured with gatun's in-process driver in three namespaces, in
 * turns sample by sample: one whose conntrack table is empty, one holding {@code entries}
 * unrelated UDP entries (inserted with {@code conntrack -R}, untranslated, to port 53, never
 * published), and the same kind of table where the published port was heard (the walk a waiting
 * client costs). Each sample is one publish of one mapping; its unpublish, unmeasured, follows.
 */
final class UdpPublish {

    private static final InetAddress CONTAINER = InetAddress.ofLiteral("10.88.0.2");
    private static final int PORT = 5353;

    private UdpPublish() {}

    /** One namespace of the comparison: a driver with network n1, and the conntrack entries put there. */
    private record Side(String name, NetworkNamespace ns, GatunDriver driver) implements AutoCloseable {
        static Side make(String name, int entries, boolean heard) {
            NetworkNamespace ns = NamedNamespaces.create("gatun-bench-udp-" + ProcessHandle.current().pid() + "-" + name);
            try {
                GatunDriver driver = Gatun.open(ns, "nftables");
                driver.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse("10.88.0.0/16")).build());
                insertEntries(ns, entries);
                if (heard) {
                    tool(ns, List.of("nft", "add", "element", "inet", "gatun", "udpheard", "{ " + PORT + " }"));
                }
                return new Side(name, ns, driver);
            } catch (RuntimeException e) {
                NamedNamespaces.delete(ns.name());
                throw e;
            }
        }

        @Override
        public void close() {
            driver.close();
            NamedNamespaces.delete(ns.name());
        }
    }

    /** Unmeasured publishes of each protocol on the quiet side first: what runs warm, as a serve's driver does. */
    private static final int WARM_UP = 2_000;

    /**
     * {@code rounds} samples per side and protocol, the sides' order turning every round, after
     * {@link #WARM_UP} unmeasured publishes of each protocol, one unmeasured round of every side and
     * a wait until this JVM's JIT is idle.
     */
    static Map<String, Object> measure(int entries, int rounds) {
        Map<String, Object> m = new LinkedHashMap<>();
        try (Side quiet = Side.make("quiet", 0, false); Side busy = Side.make("busy", entries, false);
             Side heard = Side.make("heard", entries, true)) {
            List<Side> sides = List.of(quiet, busy, heard);
            Map<String, List<Long>> samples = new LinkedHashMap<>();
            for (int i = 0; i < WARM_UP; i++) {
                publish(quiet.driver(), i % 2 == 0 ? "udp" : "tcp");
            }
            for (int round = -1; round < rounds; round++) {
                for (int i = 0; i < sides.size(); i++) {
                    Side side = sides.get(Math.floorMod(round + i, sides.size()));
                    for (String protocol : List.of("udp", "tcp")) {
                        long micros = publish(side.driver(), protocol);
                        if (round >= 0) {
                            samples.computeIfAbsent(side.name() + "_" + protocol, k -> new ArrayList<>()).add(micros);
                        }
                    }
                }
                if (round == -1) {
                    Worker.awaitIdleJit();
                }
            }
            m.put("conntrack_entries", entries);
            m.put("rounds", rounds);
            samples.forEach((k, v) -> m.put(k + "_median_us", Stats.median(v)));
            m.put("udp_busy_over_quiet", ratio(samples.get("busy_udp"), samples.get("quiet_udp")));
            m.put("tcp_busy_over_quiet", ratio(samples.get("busy_tcp"), samples.get("quiet_tcp")));
            m.put("udp_over_tcp_quiet", ratio(samples.get("quiet_udp"), samples.get("quiet_tcp")));
            m.put("udp_heard_over_quiet", ratio(samples.get("heard_udp"), samples.get("quiet_udp")));
        }
        return m;
    }

    private static double ratio(List<Long> a, List<Long> b) {
        return Math.round(100.0 * Stats.median(a) / Math.max(1, Stats.median(b))) / 100.0;
    }

    /** One publish of one mapping, timed; then its unpublish, not timed. */
    private static long publish(GatunDriver driver, String protocol) {
        List<PortSpec> spec = List.of(PortSpec.parse(PORT + ":53/" + protocol));
        long start = System.nanoTime();
        List<PortMapping> made = driver.publish("n1", CONTAINER, spec, "bench");
        long micros = (System.nanoTime() - start) / 1000;
        if (made.size() != 1) {
            throw new IllegalStateException("gatun published " + made.size() + " mappings of one");
        }
        driver.unpublish("n1", CONTAINER, spec, "bench");
        return micros;
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
