package dev.gatun.bench;

import dev.gatun.facade.Gatun;
import dev.gatun.GatunException;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.DataType;
import dev.gatun.nft.Element;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Table;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Large changes: a bulk publish of many mappings in one call, gatun's in-process driver against
 * the C floor sending the same elements in one batch ({@code publish_ref}'s "bulk"), in turn,
 * each on an emptied map; and ({@link #heal}) how long a serve holding as many takes to put
 * them all back after {@code nft flush ruleset}.
 */
final class Bulk {

    /** The targets: a bulk publish within 1.5x of the floor per mapping; a heal of 100,000 in under a second. */
    static final double PER_MAPPING_TARGET = 1.5;
    static final long HEAL_TARGET_MS = 1000;
    private static final long PROBE_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private Bulk() {}

    /**
     * {@code rounds} bulk publishes of {@code mappings} mappings per tool (half tcp, half udp,
     * host ports 1 to mappings/2, as {@link Subjects#existingSpecs}), after one unmeasured round
     * each and a wait until this JVM's JIT is idle; the first tool alternates by round. The map
     * is flushed with nft before each, unmeasured.
     */
    static Map<String, Object> batch(Path cRef, Path timer, int mappings, int rounds) {
        Map<String, Object> m = new LinkedHashMap<>();
        // The floor's own namespace, with gatun's table and network n1: gatun publishes there too.
        try (Subjects.CReference floor = new Subjects.CReference(cRef)) {
            floor.runInside(timer);
            List<PortSpec> specs = Subjects.existingSpecs(mappings).stream().map(PortSpec::parse).toList();
            InetAddress container = InetAddress.ofLiteral(Subjects.CONTAINER);
            List<Long> c = new ArrayList<>();
            List<Long> gatun = new ArrayList<>();
            try (NetworkDriver driver = Gatun.open(floor.ns, "nftables")) {
                for (int round = -1; round < rounds; round++) {
                    for (int turn = 0; turn < 2; turn++) {
                        flush(floor.inside());
                        boolean cNow = (round + turn) % 2 == 0;
                        long micros = cNow ? Long.parseLong(floor.ask("bulk 1 " + mappings, 1).getFirst())
                                : publish(driver, container, specs);
                        if (round >= 0) {
                            (cNow ? c : gatun).add(micros);
                        }
                    }
                    if (round < 0) {
                        // As after every case's unmeasured round: gatun measured compiled, as the C floor is.
                        Worker.awaitIdleJit();
                    }
                }
            }
            long cMedian = Stats.median(c);
            long gatunMedian = Stats.median(gatun);
            m.put("mappings", mappings);
            m.put("rounds", rounds);
            // Every round, in order: the spread shows how much the machine's load moved a median.
            m.put("c_us_by_round", c);
            m.put("gatun_us_by_round", gatun);
            m.put("c_median_us", cMedian);
            m.put("gatun_median_us", gatunMedian);
            m.put("c_ns_per_mapping", cMedian * 1000 / mappings);
            m.put("gatun_ns_per_mapping", gatunMedian * 1000 / mappings);
            double ratio = Math.round(1000.0 * gatunMedian / cMedian) / 1000.0;
            m.put("gatun_over_c", ratio);
            m.put("target", PER_MAPPING_TARGET);
            m.put("met", ratio <= PER_MAPPING_TARGET);
        }
        return m;
    }

    private static long publish(NetworkDriver driver, InetAddress container, List<PortSpec> specs) {
        long start = System.nanoTime();
        List<PortMapping> made = driver.publish(new PortRequest("n1", container, specs, "bench"));
        long micros = (System.nanoTime() - start) / 1000;
        if (made.size() != specs.size()) {
            throw new IllegalStateException("gatun published " + made.size() + " of " + specs.size() + " mappings");
        }
        return micros;
    }

    private static void flush(InNamespace inside) {
        InNamespace.Run r = inside.run(List.of("nft", "flush", "map", "inet", "gatun", "ports4"), null);
        if (r.status() != 0) {
            throw new IllegalStateException("nft flush map inet gatun ports4 exited " + r.status() + ": " + r.output());
        }
    }

    /** gatun's map of mappings on every host address, as nft names it: looked up here, not through gatun's driver. */
    private static final NftSet PORTS4 = NftSet.map(Table.of(Family.INET, "gatun"), "ports4",
            List.of(DataType.INET_PROTO, DataType.INET_SERVICE), List.of(DataType.IPV4_ADDR, DataType.INET_SERVICE));

    /**
     * With a serve holding {@code mappings} mappings (half tcp, half udp, host ports from
     * {@code firstPort} on, as {@link Footprint} publishes them): runs {@code nft flush ruleset}
     * and returns the milliseconds from just before it to when the first and the last mapping of
     * each protocol are back, asked with one netlink lookup each, again and again (a repair is
     * whole transactions, so these four say the rest are there too; {@code nft get element}
     * reads the whole map, a second with 100,000 elements). Counts the map's elements afterwards
     * with nft and fails when any is missing.
     */
    static long heal(InNamespace inside, NetworkNamespace ns, int mappings, int firstPort) {
        int last = firstPort + mappings / 2 - 1;
        List<Element> probes = List.of(Element.of("tcp", Integer.toString(firstPort)), Element.of("udp", Integer.toString(firstPort)),
                Element.of("tcp", Integer.toString(last)), Element.of("udp", Integer.toString(last)));
        try (Nftables nft = Nftables.open(ns)) {
            long start = System.nanoTime();
            InNamespace.Run flush = inside.run(List.of("nft", "flush", "ruleset"), null);
            if (flush.status() != 0) {
                throw new IllegalStateException("nft flush ruleset exited " + flush.status() + ": " + flush.output());
            }
            long deadline = start + TimeUnit.SECONDS.toNanos(60);
            for (Element probe : probes) {
                while (!present(nft, probe)) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the serve had not put " + probe + " back 60 s after nft flush ruleset");
                    }
                    // A look a millisecond, not a spin: on a machine of two CPUs a spinning
                    // probe takes one of the CPUs the serve's heal runs on.
                    LockSupport.parkNanos(PROBE_INTERVAL_NANOS);
                }
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            InNamespace.Run list = inside.run(List.of("nft", "list", "map", "inet", "gatun", "ports4"), null);
            long back = list.output().lines().filter(l -> l.contains(" : " + Subjects.CONTAINER + " . ")).count();
            if (back != mappings) {
                throw new IllegalStateException("after the heal the map holds " + back + " mappings, not " + mappings);
            }
            return millis;
        }
    }

    /** Whether the element is in gatun's map; the map or its table gone (the flush) is not yet. */
    private static boolean present(Nftables nft, Element key) {
        try {
            return nft.element(PORTS4, key).isPresent();
        } catch (GatunException e) {
            return false;
        }
    }
}
