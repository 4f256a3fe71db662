package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.nft.Nftables;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static dev.gatun.bindings.internal.libc_h.ERESTART;

/**
 * The four maps as a long-running driver keeps them in memory, for a process whose every
 * nftables notification reaches {@link MapChanges}: a publish is planned from memory and
 * committed in one round trip, guarded by the generation memory is at. Memory is what the kernel
 * held at that generation: read once (and again when notifications were lost, or another
 * transaction changed a map), then moved on by this store's own commits and by the
 * transactions heard to leave the maps alone. When the guard fails (someone committed since,
 * not heard yet) the batch is planned again from a reading of the kernel, as without memory,
 * and what that commit changed is applied once memory has caught up with it. Used by one
 * thread at a time, as every store.
 */
final class FollowedMappingStore implements MappingStore {

    /** Commits made past memory beyond this many (no notification heard for them): memory is read again. */
    private static final int MAX_AHEAD = 64;

    /** A commit of this store made from a reading past memory: the generation it made, and what it changed. */
    private record OwnCommit(int generation, Collection<PortMapping> deletes, Collection<PortMapping> adds) {}

    private final Nftables nft;
    private final Supplier<CountedSubnets> counted;
    private final MapChanges changes;
    private final NftablesMappingStore reader;

    /** By host key, as a reading would return them (no network named); null: to be read. */
    private Map<HostKey, PortMapping> held;
    /** The generation at which the kernel held exactly {@link #held}. */
    private int heldAt;
    /** Whether memory was read and nothing committed from it since: a refusal from the kernel is then no mistake of memory. */
    private boolean freshlyRead;
    /** The generation at which a commit from memory found someone else's commit: the kernel is read until memory moves on. */
    private Integer staleAt;
    private final List<OwnCommit> ahead = new ArrayList<>();
    /** Readings of the kernel so far (memory read whole, or a batch planned from lookups). */
    private long reads;

    FollowedMappingStore(Nftables nft, Supplier<CountedSubnets> counted, MapChanges changes) {
        this(nft, counted, changes, new AtomicBoolean());
    }

    /** {@code tableLeftToCommit}: as for {@link NftablesMappingStore}. */
    FollowedMappingStore(Nftables nft, Supplier<CountedSubnets> counted, MapChanges changes,
                         AtomicBoolean tableLeftToCommit) {
        this.nft = nft;
        this.counted = counted;
        this.changes = changes;
        this.reader = new NftablesMappingStore(nft, counted, tableLeftToCommit);
    }

    /** How often the kernel was read, for tests that check a publish was planned from memory. */
    long reads() {
        return reads;
    }

    @Override
    public View begin() {
        catchUp();
        if (staleAt == null || staleAt != heldAt) {
            staleAt = null;
            return new Remembered(freshlyRead);
        }
        reads++;
        return new Read(reader.begin());
    }

    /** Reads the four maps whole, and the generation before them (a change in between fails the guard). */
    private void read() {
        reads++;
        ahead.clear();
        staleAt = null;
        int generation = nft.generation();
        Map<HostKey, PortMapping> read = new HashMap<>();
        try {
            for (PortMapping m : MappingElements.all(nft)) {
                read.put(m.hostKey(), m);
            }
        } catch (NetlinkException e) {
            if (!e.isNotFound()) {
                throw e;
            }
            // No table yet: nothing is held, and a commit will say what is missing.
        }
        held = read;
        heldAt = generation;
        freshlyRead = true;
    }

    /**
     * Moves memory on to the last generation heard, if every transaction since it left the maps
     * alone or was this store's own; otherwise reads it again.
     */
    private void catchUp() {
        MapChanges.Since s = changes.since(heldAt);
        if (held == null || s.lost() || ahead.size() > MAX_AHEAD) {
            read();
            return;
        }
        if (!s.heardAny() || !Generations.after(s.lastHeard(), heldAt)) {
            return;
        }
        for (int g : s.changing()) {
            if (!madeHere(g)) {
                read();
                return;
            }
        }
        for (Iterator<OwnCommit> it = ahead.iterator(); it.hasNext(); ) {
            OwnCommit c = it.next();
            if (Generations.after(c.generation(), s.lastHeard())) {
                break;
            }
            apply(c.deletes(), c.adds());
            it.remove();
        }
        heldAt = s.lastHeard();
    }

    private boolean madeHere(int generation) {
        for (OwnCommit c : ahead) {
            if (c.generation() == generation) {
                return true;
            }
        }
        return false;
    }

    private void apply(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
        for (PortMapping m : deletes) {
            held.remove(m.hostKey());
        }
        for (PortMapping m : adds) {
            // As a reading returns it: no network (the kernel keeps none); the owner is the element's comment.
            held.put(m.hostKey(), new PortMapping(null, m.protocol(), m.hostIp(), m.hostPort(), m.containerIp(),
                    m.containerPort(), m.owner()));
        }
    }

    /** A view of memory: no round trip to read, one to commit. */
    private final class Remembered implements View {
        private final boolean fresh;

        Remembered(boolean fresh) {
            this.fresh = fresh;
        }

        @Override
        public Optional<PortMapping> get(PortMapping key) {
            return Optional.ofNullable(held.get(key.hostKey()));
        }

        @Override
        public List<PortMapping> all() {
            return new ArrayList<>(held.values());
        }

        /** One round trip: the kernel's generation, which must still be memory's. */
        @Override
        public void confirm() {
            if (nft.generation() != heldAt) {
                staleAt = heldAt;
                throw new StaleViewException(new GenerationConflictException("answer from memory", ERESTART, heldAt));
            }
        }

        @Override
        public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
            commit(deletes, adds, List.of());
        }

        @Override
        public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds,
                           Collection<BridgeRules> networks) {
            if (deletes.isEmpty() && adds.isEmpty() && networks.isEmpty()) {
                // Changes that cancel out send nothing: what proves the answers is the generation.
                confirm();
                return;
            }
            try {
                // Created, not added: a key memory thinks free and the kernel holds fails the commit.
                reader.commit(heldAt, deletes, adds, networks, counted.get(), true);
            } catch (StaleViewException e) {
                staleAt = heldAt;
                throw e;
            } catch (NetlinkException e) {
                // The kernel refused a change memory said it would take: memory was wrong, read
                // it again; unless it was just read, then the refusal is the kernel's answer.
                held = null;
                if (fresh) {
                    throw e;
                }
                throw new StaleViewException(e);
            } catch (RuntimeException e) {
                // A reply lost, say: whether the commit was made is not known.
                held = null;
                throw e;
            }
            if (deletes.isEmpty() && adds.isEmpty()) {
                // Network entries alone: the maps are as memory holds them. The kernel moved its
                // generation only if an entry was missing; that transaction, once heard, left the
                // maps alone, and until it is heard the guard sends the next commit to catch up.
                return;
            }
            apply(deletes, adds);
            heldAt = Generations.next(heldAt);
            freshlyRead = false;
        }
    }

    /** A view read from the kernel past memory; its commit is applied to memory once memory catches up. */
    private final class Read implements View {
        private final NftablesMappingStore.ReadView read;

        Read(NftablesMappingStore.ReadView read) {
            this.read = read;
        }

        @Override
        public Optional<PortMapping> get(PortMapping key) {
            return read.get(key);
        }

        @Override
        public List<Optional<PortMapping>> getAll(List<PortMapping> keys) {
            return read.getAll(keys);
        }

        @Override
        public List<PortMapping> all() {
            return read.all();
        }

        @Override
        public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
            commit(deletes, adds, List.of());
        }

        @Override
        public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds,
                           Collection<BridgeRules> networks) {
            try {
                read.commit(deletes, adds, networks);
            } catch (StaleViewException e) {
                throw e;
            } catch (RuntimeException e) {
                // Made or not, unknown: a reading afterwards cannot tell which generation was whose.
                held = null;
                throw e;
            }
            if (deletes.isEmpty() && adds.isEmpty()) {
                // Nothing of the maps, at most network entries (see Remembered.commit).
                return;
            }
            int made = Generations.next(read.generation());
            if (held != null && made == Generations.next(heldAt)) {
                apply(deletes, adds);
                heldAt = made;
            } else if (held != null) {
                ahead.add(new OwnCommit(made, List.copyOf(deletes), List.copyOf(adds)));
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
