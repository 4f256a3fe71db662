package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.internal.InetText;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Element;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Transaction;
import dev.gatun.rtnl.Prefix;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
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
        if (networks.isEmpty()) {
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
                if (!intact) {
                    if (!now.tables().isEmpty()) {
                        tx.delete(GatunRuleset.TABLE);
                    }
                    GatunRuleset.build(tx.add(GatunRuleset.TABLE));
                    repaired.add(GatunRuleset.TABLE.describe() + " with its sets, chains and rules");
                    for (NftSet map : MAPS) {
                        if (!now.elementsOf(map).isEmpty()) {
                            adds.computeIfAbsent(map, k -> new ArrayList<>()).addAll(now.elementsOf(map));
                        }
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
                Set<List<String>> held = new HashSet<>();
                for (NftSet map : MAPS) {
                    now.elementsOf(map).forEach(e -> held.add(withSet(map, e.key())));
                }
                for (PortMapping m : wanted) {
                    if (held.add(withSet(map(m), key(m)))) {
                        adds.computeIfAbsent(map(m), k -> new ArrayList<>()).add(element(m));
                        repaired.add("port " + m.describeHost() + " -> " + InetText.of(m.containerIp()) + ":"
                                + m.containerPort() + " of owner " + m.owner());
                    }
                }
                if (intact && adds.isEmpty()) {
                    return List.of();
                }
                adds.forEach(tx::addElements);
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

    private static List<String> withSet(NftSet set, List<String> key) {
        List<String> out = new ArrayList<>(key.size() + 1);
        out.add(set.name());
        out.addAll(key);
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
            for (Element e : nft.elements(map)) {
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
                    List<Nftables.Lookup> lookups = keys.stream()
                            .map(k -> new Nftables.Lookup(map(k), Element.of(key(k).toArray(String[]::new)))).toList();
                    List<Optional<Element>> found;
                    if (generation == null) {
                        Nftables.Found read = nft.elementsAtGeneration(lookups);
                        generation = read.generation();
                        found = read.found();
                    } else {
                        found = nft.elements(lookups);
                    }
                    List<Optional<PortMapping>> out = new ArrayList<>();
                    for (int i = 0; i < keys.size(); i++) {
                        NftSet map = lookups.get(i).set();
                        out.add(found.get(i).map(e -> mapping(map, e)));
                    }
                    return out;
                }

                @Override
                public void commit(List<PortMapping> deletes, List<PortMapping> adds) {
                    Transaction tx = nft.transaction().guardGeneration(generation());
                    group(deletes, m -> Element.of(key(m).toArray(String[]::new))).forEach(tx::deleteElements);
                    group(adds, NftablesFirewall::element).forEach(tx::addElements);
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
    private static Map<NftSet, List<Element>> group(List<PortMapping> mappings,
                                                    java.util.function.Function<PortMapping, Element> element) {
        Map<NftSet, List<Element>> out = new LinkedHashMap<>();
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

    private static List<String> key(PortMapping m) {
        List<String> k = new ArrayList<>();
        if (m.hostIp() != null) {
            k.add(InetText.of(m.hostIp()));
        }
        k.add(m.protocol().keyword());
        k.add(Integer.toString(m.hostPort()));
        return k;
    }

    private static Element element(PortMapping m) {
        return Element.of(key(m).toArray(String[]::new))
                .to(InetText.of(m.containerIp()), Integer.toString(m.containerPort())).withComment(m.owner());
    }

    private static PortMapping mapping(NftSet map, Element e) {
        boolean bound = map == GatunRuleset.HOSTIP4 || map == GatunRuleset.HOSTIP6;
        int i = bound ? 1 : 0;
        InetAddress hostIp = bound ? InetAddress.ofLiteral(e.key().getFirst()) : null;
        return new PortMapping(null, Protocol.parse(e.key().get(i)), hostIp, Integer.parseInt(e.key().get(i + 1)),
                InetAddress.ofLiteral(e.data().get(0)), Integer.parseInt(e.data().get(1)),
                e.comment() == null ? "" : e.comment());
    }
}
