package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.internal.InetText;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Concatenation;
import dev.gatun.nft.Element;
import dev.gatun.nft.KeySet;
import dev.gatun.nft.StoredElement;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Transaction;
import dev.gatun.rtnl.Prefix;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/** gatun's own nftables table (see {@link GatunRuleset}): networks and mappings are set and map elements. */
final class NftablesFirewall implements Firewall {

    /** How often a repair reads and commits again when another process keeps committing in between. */
    private static final int RESTORE_ATTEMPTS = 20;

    private final NetworkNamespace host;
    /** Runs between a repair's read and its commit: a test makes another writer commit there. */
    private final Runnable beforeRepairCommit;

    NftablesFirewall(NetworkNamespace host) {
        this(host, () -> { });
    }

    NftablesFirewall(NetworkNamespace host, Runnable beforeRepairCommit) {
        this.host = host;
        this.beforeRepairCommit = beforeRepairCommit;
    }

    @Override
    public String name() {
        return "nftables";
    }

    @Override
    public void ensure(List<Network> existing) {
        try (Nftables nft = Nftables.open(host)) {
            Ruleset now = nft.listWithoutElements(GatunRuleset.TABLE);
            if (now.tables().isEmpty()) {
                GatunRuleset.create(nft);
                return;
            }
            if (GatunRuleset.intact(now)) {
                return;
            }
        }
        // Made by an older gatun (another shape) or damaged: rebuilt in one transaction.
        restore(existing, List.of());
    }

    @Override
    public ForeignFirewalls foreignFirewalls() {
        return ForeignFirewalls.of(host, GatunRuleset.TABLE.name(), GatunRuleset.FORWARD_PRIORITY, GatunRuleset.MARK, null);
    }

    @Override
    public void teardown() {
        try (Nftables nft = Nftables.open(host)) {
            nft.transaction().destroy(GatunRuleset.TABLE).commit();
        }
    }

    @Override
    public void network(String bridge, Prefix v4, Prefix v6, boolean internal, boolean masquerade, boolean add) {
        try (Nftables nft = Nftables.open(host)) {
            Transaction tx = nft.transaction();
            entries(bridge, v4, v6, internal, masquerade).forEach((set, e) -> {
                if (add) {
                    tx.addElements(set, List.of(e));
                } else {
                    tx.deleteElements(set, List.of(e));
                }
            });
            tx.commit();
        }
    }

    /** A network's elements in the ruleset's sets. */
    private static Map<NftSet, Element> entries(String bridge, Prefix v4, Prefix v6, boolean internal, boolean masquerade) {
        Map<NftSet, Element> elements = new LinkedHashMap<>();
        elements.put(GatunRuleset.BRIDGES, Element.of(bridge));
        elements.put(GatunRuleset.SAMEBRIDGE, Element.of(bridge, bridge));
        if (internal) {
            elements.put(GatunRuleset.INTERNAL, Element.of(bridge));
        }
        elements.put(GatunRuleset.SUBNETS4, Element.of(v4.toString()));
        if (masquerade && !internal) {
            elements.put(GatunRuleset.MASQ4, Element.of(v4.toString()));
        }
        if (v6 != null) {
            elements.put(GatunRuleset.SUBNETS6, Element.of(v6.toString()));
            if (masquerade && !internal) {
                elements.put(GatunRuleset.MASQ6, Element.of(v6.toString()));
            }
        }
        return elements;
    }

    /**
     * A repair names this many ports it put back, and counts the rest: a serve logs each line,
     * and 100,000 lines took it longer than the repair itself.
     */
    private static final int PORTS_NAMED = 10;

    /**
     * Reads the table and, in one transaction guarded by the generation it read, puts back what
     * is missing: the whole table when a part of its shape is gone (keeping the mappings that
     * survived), a network's entries when its bridge is not in the bridges set, and wanted
     * mappings whose key is free. A key someone else holds now is left to them. A serve runs this
     * every few seconds with every mapping it keeps: the maps are read as their keys' bytes only
     * (see {@link KeySet}), and the mappings in them are read whole only to rebuild the table.
     */
    @Override
    public List<String> restore(List<Network> networks, List<PortMapping> wanted) {
        if (networks.isEmpty() && wanted.isEmpty()) {
            return List.of();
        }
        try (Nftables nft = Nftables.open(host)) {
            for (int attempt = 1; ; attempt++) {
                int generation = nft.generation();
                Ruleset now = nft.listWithoutElements(GatunRuleset.TABLE);
                boolean intact = GatunRuleset.intact(now);
                List<String> repaired = new ArrayList<>();
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
                    for (PortMapping m : present(nft, now)) {
                        mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m));
                    }
                }
                missingEntries(networks, intact ? nft::elements : set -> List.of(), adds, repaired);
                missingMappings(wanted, held, mappingAdds, repaired);
                if (intact && adds.isEmpty() && mappingAdds.isEmpty()) {
                    return List.of();
                }
                if (commit(tx, adds, mappingAdds, attempt)) {
                    return repaired;
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
            Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
            boolean missing = false;
            for (Map.Entry<NftSet, Element> e : entries(n.bridge(), n.subnets().getFirst(), v6, n.internal(),
                    n.masquerade()).entrySet()) {
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
     * {@link #restore} for when only elements of some of the table's sets were removed: reads
     * just those sets (not the whole table, whose maps may hold many thousands of mappings),
     * and puts back the networks' entries and the wanted mappings they lack, guarded by the
     * generation read first. A set that is gone means more damage: then the whole table is
     * restored.
     */
    @Override
    public List<String> restoreElements(List<Network> networks, List<PortMapping> wanted, Collection<String> setNames) {
        if (networks.isEmpty() && wanted.isEmpty()) {
            return List.of();
        }
        List<NftSet> sets = GatunRuleset.SETS.stream().filter(s -> setNames.contains(s.name())).toList();
        if (sets.isEmpty()) {
            return List.of();
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
                        : entriesOf(networks, s), adds, repaired);
                Map<NftSet, List<StoredElement>> mappingAdds = new LinkedHashMap<>();
                missingMappings(wanted, held, mappingAdds, repaired);
                if (adds.isEmpty() && mappingAdds.isEmpty()) {
                    return List.of();
                }
                if (commit(nft.transaction().guardGeneration(generation), adds, mappingAdds, attempt)) {
                    return repaired;
                }
            }
        }
    }

    /**
     * The wanted mappings whose key their map lacks in {@code held} (a map not in it is left
     * alone), into {@code mappingAdds}; the first ten named in {@code repaired}, the rest counted.
     * A mapping's key in its map stands for its host key: one wanted twice is added once.
     */
    private static void missingMappings(List<PortMapping> wanted, Map<NftSet, KeySet> held,
                                        Map<NftSet, List<StoredElement>> mappingAdds, List<String> repaired) {
        int ports = 0;
        for (PortMapping m : wanted) {
            KeySet keys = held.get(map(m));
            if (keys != null && keys.add(key(m))) {
                mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m));
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
        beforeRepairCommit.run();
        try {
            tx.commit();
            return true;
        } catch (GenerationConflictException e) {
            if (attempt >= RESTORE_ATTEMPTS) {
                throw GenerationConflictException.gaveUp("repair " + GatunRuleset.TABLE.describe(), attempt, e);
            }
            return false;
        }
    }

    /** The entries {@code networks} want in {@code set}. */
    private static List<Element> entriesOf(List<Network> networks, NftSet set) {
        List<Element> out = new ArrayList<>();
        for (Network n : networks) {
            Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
            Element e = entries(n.bridge(), n.subnets().getFirst(), v6, n.internal(), n.masquerade()).get(set);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
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

    @Override
    public MappingStore openStore() {
        return new Store(Nftables.open(host));
    }

    @Override
    public List<PortMapping> mappings() {
        try (Nftables nft = Nftables.open(host)) {
            if (nft.listWithoutElements(GatunRuleset.TABLE).tables().isEmpty()) {
                return List.of();
            }
            return all(nft);
        }
    }

    private static final List<NftSet> MAPS = List.of(GatunRuleset.PORTS4, GatunRuleset.HOSTIP4, GatunRuleset.PORTS6,
            GatunRuleset.HOSTIP6);

    private static List<PortMapping> all(Nftables nft) {
        List<PortMapping> out = new ArrayList<>();
        for (NftSet map : MAPS) {
            for (StoredElement e : nft.storedElements(map)) {
                out.add(mapping(map, e));
            }
        }
        return out;
    }

    /** Map elements, read and written on the committer thread; commits are guarded by the generation id. */
    private static final class Store implements MappingStore {
        /**
         * Up to this many keys are looked up one by one (one GETSETELEM each, all in one
         * datagram); more are answered from dumps of their maps. A lookup costs about what a
         * dump costs per element, and a publish of a few ports must not read 100,000 elements;
         * a bulk publish of 20,000 spent 0.5-2.6 s in lookups (three per port: the key and one
         * per host address), ten times its commit.
         */
        private static final int LOOKUPS_BEFORE_DUMP = 1024;

        private final Nftables nft;

        Store(Nftables nft) {
            this.nft = nft;
        }

        /**
         * A view whose generation is read with its first lookup, in the same datagram: a
         * publish costs one round trip to read and one to commit.
         */
        @Override
        public View begin() {
            return new View() {
                private Integer generation;

                private int generation() {
                    if (generation == null) {
                        generation = nft.generation();
                    }
                    return generation;
                }

                @Override
                public Optional<PortMapping> get(PortMapping key) {
                    return getAll(List.of(key)).getFirst();
                }

                @Override
                public List<PortMapping> all() {
                    generation();
                    return NftablesFirewall.all(nft);
                }

                @Override
                public List<Optional<PortMapping>> getAll(List<PortMapping> keys) {
                    if (keys.size() > LOOKUPS_BEFORE_DUMP) {
                        return fromDumps(keys);
                    }
                    List<Nftables.StoredLookup> lookups = new ArrayList<>(keys.size());
                    for (PortMapping k : keys) {
                        lookups.add(new Nftables.StoredLookup(map(k), key(k)));
                    }
                    Nftables.StoredFound read = nft.storedAtGeneration(lookups);
                    if (generation == null) {
                        generation = read.generation();
                    }
                    List<Optional<PortMapping>> out = new ArrayList<>(keys.size());
                    for (int i = 0; i < keys.size(); i++) {
                        NftSet map = lookups.get(i).set();
                        out.add(read.found().get(i).map(e -> mapping(map, e)));
                    }
                    return out;
                }

                /**
                 * Many keys (a bulk publish, a repair): the maps they are in read whole, one dump
                 * each, after the generation, which the commit's guard then holds to.
                 */
                private List<Optional<PortMapping>> fromDumps(List<PortMapping> keys) {
                    generation();
                    Map<NftSet, Map<ByteBuffer, StoredElement>> dumped = new IdentityHashMap<>();
                    List<Optional<PortMapping>> out = new ArrayList<>(keys.size());
                    for (PortMapping k : keys) {
                        NftSet map = map(k);
                        Map<ByteBuffer, StoredElement> held = dumped.computeIfAbsent(map, this::byKey);
                        // An empty map (a first bulk publish) holds nothing: no key bytes to make.
                        StoredElement e = held.isEmpty() ? null : held.get(ByteBuffer.wrap(key(k)));
                        out.add(e == null ? Optional.empty() : Optional.of(mapping(map, e)));
                    }
                    return out;
                }

                private Map<ByteBuffer, StoredElement> byKey(NftSet map) {
                    Map<ByteBuffer, StoredElement> out = new HashMap<>();
                    for (StoredElement e : nft.storedElements(map)) {
                        out.put(ByteBuffer.wrap(e.key()), e);
                    }
                    return out;
                }

                @Override
                public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
                    Transaction tx = nft.transaction().guardGeneration(generation());
                    group(deletes, m -> StoredElement.key(key(m))).forEach(tx::deleteStored);
                    group(adds, NftablesFirewall::element).forEach(tx::addStored);
                    try {
                        tx.commit();
                    } catch (GenerationConflictException e) {
                        throw new StaleViewException(e);
                    }
                }
            };
        }

        @Override
        public void close() {
            nft.close();
        }
    }

    /** Per map, one element list: the transaction splits it into messages by size. */
    private static Map<NftSet, List<StoredElement>> group(Collection<PortMapping> mappings,
                                                          java.util.function.Function<PortMapping, StoredElement> element) {
        // The four maps are constants: compared by identity, not by a record hash of their whole definition.
        Map<NftSet, List<StoredElement>> out = new java.util.IdentityHashMap<>(MAPS.size());
        for (PortMapping m : mappings) {
            out.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element.apply(m));
        }
        return out;
    }

    private static NftSet map(PortMapping m) {
        boolean v4 = m.containerIp() instanceof Inet4Address;
        if (m.hostIp() == null) {
            return v4 ? GatunRuleset.PORTS4 : GatunRuleset.PORTS6;
        }
        return v4 ? GatunRuleset.HOSTIP4 : GatunRuleset.HOSTIP6;
    }

    // A mapping's bytes, laid out by its map's types: the key is [host address .] protocol .
    // host port, the data container address . container port (see GatunRuleset).

    private static byte[] key(PortMapping m) {
        NftSet map = map(m);
        byte[] protocol = {(byte) m.protocol().number()};
        return m.hostIp() == null
                ? Concatenation.of(map.keyType(), protocol, port(m.hostPort()))
                : Concatenation.of(map.keyType(), m.hostIp().getAddress(), protocol, port(m.hostPort()));
    }

    private static StoredElement element(PortMapping m) {
        return new StoredElement(key(m), Concatenation.of(map(m).dataType(), m.containerIp().getAddress(),
                port(m.containerPort())), m.owner());
    }

    private static PortMapping mapping(NftSet map, StoredElement e) {
        boolean bound = map == GatunRuleset.HOSTIP4 || map == GatunRuleset.HOSTIP6;
        byte[][] key = Concatenation.split(map.keyType(), e.key());
        byte[][] data = Concatenation.split(map.dataType(), e.data());
        int i = bound ? 1 : 0;
        return new PortMapping(null, Protocol.ofNumber(key[i][0] & 0xff), bound ? address(key[0]) : null,
                port(key[i + 1]), address(data[0]), port(data[1]), e.comment() == null ? "" : e.comment());
    }

    private static byte[] port(int port) {
        return new byte[] {(byte) (port >> 8), (byte) port};
    }

    private static int port(byte[] bigEndian) {
        return ((bigEndian[0] & 0xff) << 8) | (bigEndian[1] & 0xff);
    }

    private static InetAddress address(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(bytes.length + " bytes are not an IP address", e);
        }
    }
}
