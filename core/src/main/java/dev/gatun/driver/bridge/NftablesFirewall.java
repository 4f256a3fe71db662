package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.internal.InetText;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Concatenation;
import dev.gatun.nft.Element;
import dev.gatun.nft.StoredElement;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Transaction;
import dev.gatun.rtnl.Prefix;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** gatun's own nftables table (see {@link GatunRuleset}): networks and mappings are set and map elements. */
final class NftablesFirewall implements Firewall {

    private final NetworkNamespace host;

    NftablesFirewall(NetworkNamespace host) {
        this.host = host;
    }

    @Override
    public String name() {
        return "nftables";
    }

    @Override
    public void ensure(List<Network> existing) {
        try (Nftables nft = Nftables.open(host)) {
            Ruleset now = nft.list(GatunRuleset.TABLE);
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
     * Reads the table and, in one transaction guarded by the generation it read, puts back what
     * is missing: the whole table when a part of its shape is gone (keeping the mappings that
     * survived), a network's entries when its bridge is not in the bridges set, and wanted
     * mappings whose key is free. A key someone else holds now is left to them.
     */
    @Override
    public List<String> restore(List<Network> networks, List<PortMapping> wanted) {
        if (networks.isEmpty() && wanted.isEmpty()) {
            return List.of();
        }
        try (Nftables nft = Nftables.open(host)) {
            for (int attempt = 1; ; attempt++) {
                int generation = nft.generation();
                Ruleset now = nft.list(GatunRuleset.TABLE);
                boolean intact = GatunRuleset.intact(now);
                List<String> repaired = new ArrayList<>();
                Transaction tx = nft.transaction().guardGeneration(generation);
                Map<NftSet, List<Element>> adds = new LinkedHashMap<>();
                Map<NftSet, List<StoredElement>> mappingAdds = new LinkedHashMap<>();
                List<PortMapping> present = present(now);
                if (!intact) {
                    if (!now.tables().isEmpty()) {
                        tx.delete(GatunRuleset.TABLE);
                    }
                    GatunRuleset.build(tx.add(GatunRuleset.TABLE));
                    repaired.add(GatunRuleset.TABLE.describe() + " with its sets, chains and rules");
                    for (PortMapping m : present) {
                        mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m));
                    }
                }
                Set<String> bridges = new HashSet<>();
                if (intact) {
                    now.elementsOf(GatunRuleset.BRIDGES).forEach(e -> bridges.add(e.key().getFirst()));
                }
                for (Network n : networks) {
                    if (!bridges.contains(n.bridge())) {
                        Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
                        entries(n.bridge(), n.subnets().getFirst(), v6, n.internal(), n.masquerade())
                                .forEach((set, e) -> adds.computeIfAbsent(set, k -> new ArrayList<>()).add(e));
                        repaired.add("the entries of network " + n.name());
                    }
                }
                Set<PortMapping.HostKey> held = new HashSet<>();
                present.forEach(m -> held.add(m.hostKey()));
                for (PortMapping m : wanted) {
                    if (held.add(m.hostKey())) {
                        mappingAdds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m));
                        repaired.add("port " + m.describeHost() + " -> " + InetText.of(m.containerIp()) + ":"
                                + m.containerPort() + " of owner " + m.owner());
                    }
                }
                if (intact && adds.isEmpty() && mappingAdds.isEmpty()) {
                    return List.of();
                }
                adds.forEach(tx::addElements);
                mappingAdds.forEach(tx::addStored);
                try {
                    tx.commit();
                    return repaired;
                } catch (GenerationConflictException e) {
                    if (attempt >= 20) {
                        throw new GatunException("could not repair " + GatunRuleset.TABLE.describe()
                                + ": the ruleset kept changing while it was read", e);
                    }
                }
            }
        }
    }

    /**
     * The mappings in the table as read: those of each map whose type is still gatun's (a map of
     * another shape, from an older gatun, cannot be carried over).
     */
    private static List<PortMapping> present(Ruleset now) {
        List<PortMapping> out = new ArrayList<>();
        for (NftSet map : MAPS) {
            boolean ours = now.sets().stream().anyMatch(s -> s.name().equals(map.name())
                    && s.keyType().equals(map.keyType()) && s.dataType().equals(map.dataType()));
            if (ours) {
                now.storedElementsOf(map).forEach(e -> out.add(mapping(map, e)));
            }
        }
        return out;
    }

    @Override
    public MappingStore openStore() {
        return new Store(Nftables.open(host));
    }

    @Override
    public List<PortMapping> mappings() {
        try (Nftables nft = Nftables.open(host)) {
            if (nft.list(GatunRuleset.TABLE).tables().isEmpty()) {
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
