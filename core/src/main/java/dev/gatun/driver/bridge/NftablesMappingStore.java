package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.StoredElement;
import dev.gatun.nft.Transaction;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static dev.gatun.driver.bridge.MappingElements.key;
import static dev.gatun.driver.bridge.MappingElements.map;
import static dev.gatun.driver.bridge.MappingElements.mapping;

/** Map elements, read and written on the committer thread; commits are guarded by the generation id. */
final class NftablesMappingStore implements MappingStore {
    /**
     * Up to this many keys are looked up one by one (one GETSETELEM each, all in one
     * datagram); more are answered from dumps of their maps. A lookup costs about what a
     * dump costs per element, and a publish of a few ports must not read 100,000 elements;
     * a bulk publish of 20,000 spent 0.5-2.6 s in lookups (three per port: the key and one
     * per host address), ten times its commit.
     */
    private static final int LOOKUPS_BEFORE_DUMP = 1024;

    private final Nftables nft;
    private final Supplier<CountedSubnets> counted;
    /**
     * Set by the firewall when a network was made for its first container's ports on a host
     * without gatun's table: the next commit carrying a network's entries makes the table too,
     * asked first, as a batch that fails costs the kernel a grace period (tens of milliseconds).
     */
    private final AtomicBoolean tableLeftToCommit;

    /** A view read from the kernel, and the generation it was read at (read with its first lookup, or now). */
    interface ReadView extends View {
        int generation();
    }

    /** {@code counted}: which mappings added get a counter on their element, asked once per commit. */
    NftablesMappingStore(Nftables nft, Supplier<CountedSubnets> counted) {
        this(nft, counted, new AtomicBoolean());
    }

    /** {@code tableLeftToCommit}: see the field; shared with the firewall that sets it. */
    NftablesMappingStore(Nftables nft, Supplier<CountedSubnets> counted, AtomicBoolean tableLeftToCommit) {
        this.nft = nft;
        this.counted = counted;
        this.tableLeftToCommit = tableLeftToCommit;
    }

    /**
     * A view whose generation is read with its first lookup, in the same datagram: a
     * publish costs one round trip to read and one to commit.
     */
    @Override
    public ReadView begin() {
        return new ReadView() {
            private Integer generation;

            @Override
            public int generation() {
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
                return MappingElements.all(nft);
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
                commit(deletes, adds, List.of());
            }

            @Override
            public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds,
                               Collection<BridgeRules> networks) {
                NftablesMappingStore.this.commit(generation(), deletes, adds, networks, counted.get(), false);
            }
        };
    }

    /**
     * Deletes and adds in one transaction guarded by {@code generation}; a guard that fails is a
     * {@link StaleViewException}. With {@code create}, an add whose key is held already fails
     * (EEXIST) instead of leaving the element there as it is. The entries of {@code networks} are
     * added, never created: one in place already stays as it is, and changes nothing.
     */
    void commit(int generation, Collection<PortMapping> deletes, Collection<PortMapping> adds,
                Collection<BridgeRules> networks, CountedSubnets counted, boolean create) {
        boolean withTable = !networks.isEmpty() && tableLeftToCommit.get() && !GatunRuleset.isThere(nft);
        while (true) {
            Transaction tx = nft.transaction().guardGeneration(generation);
            if (withTable) {
                GatunRuleset.build(tx.create(GatunRuleset.TABLE));
            }
            // First, so that nothing is forwarded to the new mappings' targets before their bridge's entries are in.
            for (BridgeRules n : networks) {
                NetworkEntries.of(n).forEach((set, e) -> tx.addElements(set, List.of(e)));
            }
            MappingElements.group(deletes, m -> StoredElement.key(key(m))).forEach(tx::deleteStored);
            Map<NftSet, List<StoredElement>> added = MappingElements.group(adds,
                    m -> MappingElements.element(m, counted.test(m)));
            added.forEach(create ? tx::createStored : tx::addStored);
            try {
                tx.commit();
                if (!networks.isEmpty()) {
                    tableLeftToCommit.set(false);
                }
                if (withTable) {
                    UdpHeard.seed(nft);
                }
                return;
            } catch (GenerationConflictException e) {
                throw new StaleViewException(e);
            } catch (NetlinkException e) {
                if (withTable && GatunRuleset.fellBackFrom(e)) {
                    // This kernel needs the other shape of the ruleset, now chosen.
                    continue;
                }
                if (withTable || networks.isEmpty() || !e.isNotFound()) {
                    throw e;
                }
                if (GatunRuleset.isThere(nft)) {
                    // Made by another process since the view was read (its generation moved): plan
                    // again against it. At the same generation the ENOENT is a set missing: damage.
                    if (nft.generation() != generation) {
                        throw new StaleViewException(e);
                    }
                    throw e;
                }
                // A network's first entries on a host without gatun's table, unannounced (the table
                // went since): made in the same transaction (the refused one changed nothing, and
                // the generation guards the next).
                withTable = true;
            }
        }
    }

    @Override
    public Set<Integer> udpPortsHeard(Collection<Integer> ports) {
        return UdpHeard.of(nft, ports);
    }

    @Override
    public void close() {
        nft.close();
    }
}
