package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.InetText;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Element;
import dev.gatun.nft.KeySet;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.StoredElement;
import dev.gatun.nft.Transaction;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static dev.gatun.driver.bridge.MappingElements.MAPS;
import static dev.gatun.driver.bridge.MappingElements.element;
import static dev.gatun.driver.bridge.MappingElements.key;
import static dev.gatun.driver.bridge.MappingElements.map;
import static dev.gatun.driver.bridge.MappingElements.mapping;

/**
 * Puts back what someone else removed from gatun's table: the table's shape, the networks'
 * entries, the wanted mappings whose key is free. Each repair reads, then commits guarded by
 * the generation it read, and reads again when another process committed in between.
 */
final class NftablesRepair {

    /** How often a repair reads and commits again when another process keeps committing in between. */
    private static final int RESTORE_ATTEMPTS = 20;
    /**
     * A repair names this many ports it put back, and counts the rest: a serve logs each line,
     * and 100,000 lines took it longer than the repair itself.
     */
    private static final int PORTS_NAMED = 10;

    private final NetworkNamespace host;
    /** Runs between a repair's read and its commit: a test makes another writer commit there. */
    private final Runnable beforeCommit;

    NftablesRepair(NetworkNamespace host, Runnable beforeCommit) {
        this.host = host;
        this.beforeCommit = beforeCommit;
    }

    /**
     * Reads the table and, in one transaction guarded by the generation it read, puts back what
     * is missing: the whole table when a part of its shape is gone (keeping the mappings that
     * survived), a network's entries when its bridge is not in the bridges set, and wanted
     * mappings whose key is free. A key someone else holds now is left to them. A serve runs this
     * every few seconds with every mapping it keeps: the maps are read as their keys' bytes only
     * (see {@link KeySet}), and the mappings in them are read whole only to rebuild the table.
     */
    Firewall.Restored restore(List<Network> networks, List<PortMapping> wanted) {
        if (networks.isEmpty() && wanted.isEmpty()) {
            return Firewall.Restored.NOTHING;
        }
        CountedSubnets counted = CountedSubnets.of(networks);
        try (Nftables nft = Nftables.open(host)) {
            for (int attempt = 1; ; attempt++) {
                int generation = nft.generation();
                Ruleset now = nft.listWithoutElements(GatunRuleset.TABLE);
                boolean intact = GatunRuleset.intact(now);
                List<String> repaired = new ArrayList<>();
                List<PortMapping> putBack = new ArrayList<>();
                Transaction tx = nft.transaction().guardGeneration(generation);
                Map<NftSet, List<Element>> adds = new LinkedHashMap<>();
                Map<NftSet, List<StoredElement>> mappingAdds = new LinkedHashMap<>();
                // The keys each map holds; a map of another shape (an older gatun's) holds none of ours.
                Map<NftSet, KeySet> held = new IdentityHashMap<>();
                for (NftSet map : MAPS) {
                    held.put(map, ours(now, map) ? nft.storedKeys(map) : new KeySet(map.keyLength()));
                }
                if (!intact) {
                    if (!now.tables().isEmpty()) {
                        tx.delete(GatunRuleset.TABLE);
                    }
                    GatunRuleset.build(tx.add(GatunRuleset.TABLE));
                    repaired.add(GatunRuleset.TABLE.describe() + " with its sets, chains and rules");
                    // Their counts are lost with the table: they start again from zero.
                    for (PortMapping m : present(nft, now)) {
                        mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m, counted.test(m)));
                        putBack.add(m);
                    }
                    // Containers outside gatun's networks have no network to rebuild their entries from.
                    for (OutsideTarget t : OutsideTargets.read(nft, now)) {
                        adds.computeIfAbsent(OutsideTargets.set(t), k -> new ArrayList<>()).add(OutsideTargets.element(t));
                    }
                }
                missingEntries(networks, intact ? nft::elements : set -> List.of(), adds, repaired);
                missingMappings(wanted, held, counted, mappingAdds, repaired, putBack);
                if (intact && adds.isEmpty() && mappingAdds.isEmpty()) {
                    return Firewall.Restored.NOTHING;
                }
                if (commit(tx, adds, mappingAdds, attempt)) {
                    if (!intact) {
                        UdpHeard.seed(nft);
                    }
                    return new Firewall.Restored(repaired, putBack);
                }
            }
        }
    }

    /**
     * {@link #restore} for when only elements of some of the table's sets were removed: reads
     * just those sets (not the whole table, whose maps may hold many thousands of mappings),
     * and puts back the networks' entries and the wanted mappings they lack, guarded by the
     * generation read first. A set that is gone means more damage: then the whole table is
     * restored.
     */
    Firewall.Restored restoreElements(List<Network> networks, List<PortMapping> wanted, Collection<String> setNames) {
        if (networks.isEmpty() && wanted.isEmpty()) {
            return Firewall.Restored.NOTHING;
        }
        List<NftSet> sets = GatunRuleset.SETS.stream().filter(s -> setNames.contains(s.name())).toList();
        if (sets.isEmpty()) {
            return Firewall.Restored.NOTHING;
        }
        try (Nftables nft = Nftables.open(host)) {
            for (int attempt = 1; ; attempt++) {
                int generation = nft.generation();
                Map<NftSet, List<Element>> read = new IdentityHashMap<>();
                // The keys each damaged map holds; a map not read is not missing anything.
                Map<NftSet, KeySet> held = new IdentityHashMap<>();
                try {
                    for (NftSet s : sets) {
                        if (MAPS.contains(s)) {
                            held.put(s, nft.storedKeys(s));
                        } else {
                            read.put(s, nft.elements(s));
                        }
                    }
                } catch (NetlinkException e) {
                    if (e.isNotFound()) {
                        return restore(networks, wanted);
                    }
                    throw e;
                }
                List<String> repaired = new ArrayList<>();
                Map<NftSet, List<Element>> adds = new LinkedHashMap<>();
                // Sets not read are not missing anything: they count as holding every entry.
                missingEntries(networks, s -> read.containsKey(s) ? read.get(s)
                        : NetworkEntries.in(s, networks), adds, repaired);
                Map<NftSet, List<StoredElement>> mappingAdds = new LinkedHashMap<>();
                List<PortMapping> putBack = new ArrayList<>();
                missingMappings(wanted, held, CountedSubnets.of(networks), mappingAdds, repaired, putBack);
                if (adds.isEmpty() && mappingAdds.isEmpty()) {
                    return Firewall.Restored.NOTHING;
                }
                if (commit(nft.transaction().guardGeneration(generation), adds, mappingAdds, attempt)) {
                    return new Firewall.Restored(repaired, putBack);
                }
            }
        }
    }

    /**
     * Adds to {@code adds} each network's entries that {@code present} does not list, for every
     * set of the table: a network whose subnet alone someone deleted has it put back too.
     */
    private static void missingEntries(List<Network> networks, Function<NftSet, List<Element>> present,
                                       Map<NftSet, List<Element>> adds, List<String> repaired) {
        Map<NftSet, Set<List<String>>> keys = new IdentityHashMap<>();
        for (Network n : networks) {
            boolean missing = false;
            for (Map.Entry<NftSet, Element> e : NetworkEntries.of(n).entrySet()) {
                Set<List<String>> there = keys.computeIfAbsent(e.getKey(), set -> {
                    Set<List<String>> k = new HashSet<>();
                    present.apply(set).forEach(x -> k.add(x.key()));
                    return k;
                });
                if (!there.contains(e.getValue().key())) {
                    adds.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(e.getValue());
                    missing = true;
                }
            }
            if (missing) {
                repaired.add("the entries of network " + n.name());
            }
        }
    }

    /**
     * The wanted mappings whose key their map lacks in {@code held} (a map not in it is left
     * alone), into {@code mappingAdds} and {@code putBack}; the first ten named in {@code repaired},
     * the rest counted.
     * A mapping's key in its map stands for its host key: one wanted twice is added once.
     */
    private static void missingMappings(List<PortMapping> wanted, Map<NftSet, KeySet> held, CountedSubnets counted,
                                        Map<NftSet, List<StoredElement>> mappingAdds, List<String> repaired,
                                        List<PortMapping> putBack) {
        int ports = 0;
        for (PortMapping m : wanted) {
            KeySet keys = held.get(map(m));
            if (keys != null && keys.add(key(m))) {
                mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m, counted.test(m)));
                putBack.add(m);
                if (++ports <= PORTS_NAMED) {
                    repaired.add(describeRepaired(m));
                }
            }
        }
        if (ports > PORTS_NAMED) {
            repaired.add((ports - PORTS_NAMED) + " more ports");
        }
    }

    /**
     * Commits a repair's additions in {@code tx}; false when the ruleset changed since its
     * generation was read (then the repair reads again), a {@link GenerationConflictException}
     * once that happened {@link #RESTORE_ATTEMPTS} times.
     */
    private boolean commit(Transaction tx, Map<NftSet, List<Element>> adds, Map<NftSet, List<StoredElement>> mappingAdds,
                           int attempt) {
        adds.forEach(tx::addElements);
        mappingAdds.forEach(tx::addStored);
        beforeCommit.run();
        try {
            tx.commit();
            return true;
        } catch (GenerationConflictException e) {
            if (attempt >= RESTORE_ATTEMPTS) {
                throw GenerationConflictException.gaveUp("repair " + GatunRuleset.TABLE.describe(), attempt, e);
            }
            return false;
        } catch (NetlinkException e) {
            // A table rebuilt in the shape this kernel refuses: read again and build the other.
            if (GatunRuleset.fellBackFrom(e)) {
                return false;
            }
            throw e;
        }
    }

    private static String describeRepaired(PortMapping m) {
        return "port " + m.describeHost() + " -> " + InetText.of(m.containerIp()) + ":" + m.containerPort()
                + " of owner " + m.owner();
    }

    /**
     * The mappings in the table as read: those of each map whose type is still gatun's (a map of
     * another shape, from an older gatun, cannot be carried over).
     */
    private static List<PortMapping> present(Nftables nft, Ruleset now) {
        List<PortMapping> out = new ArrayList<>();
        for (NftSet map : MAPS) {
            if (ours(now, map)) {
                nft.storedElements(map).forEach(e -> out.add(mapping(map, e)));
            }
        }
        return out;
    }

    /** Whether the table as read has {@code map} with gatun's types. */
    private static boolean ours(Ruleset now, NftSet map) {
        return now.sets().stream().anyMatch(s -> s.name().equals(map.name())
                && s.keyType().equals(map.keyType()) && s.dataType().equals(map.dataType()));
    }
}
