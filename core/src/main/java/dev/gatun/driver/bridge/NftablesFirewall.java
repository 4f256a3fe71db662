package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.NftSet;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Transaction;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * gatun's own nftables table (see {@link GatunRuleset}): networks are set elements
 * ({@link NetworkEntries}), mappings map elements ({@link MappingElements}, kept through
 * {@link NftablesMappingStore}), and what someone removes is put back by {@link NftablesRepair}.
 */
final class NftablesFirewall implements Firewall {

    private final NetworkNamespace host;
    private final NftablesRepair repair;
    /** Set when {@link #ensureExisting} found no table: the stores' next commit of a network's entries makes it. */
    private final AtomicBoolean tableLeftToCommit = new AtomicBoolean();
    private final ReentrantLock readerLock = new ReentrantLock();
    /** The socket listings read through (guarded by readerLock): opening one, which enters the namespace, cost twice the reading. */
    private Nftables reader;

    NftablesFirewall(NetworkNamespace host) {
        this(host, () -> { });
    }

    /** {@code beforeRepairCommit} runs between a repair's read and its commit: a test makes another writer commit there. */
    NftablesFirewall(NetworkNamespace host, Runnable beforeRepairCommit) {
        this.host = host;
        this.repair = new NftablesRepair(host, beforeRepairCommit);
    }

    @Override
    public String name() {
        return "nftables";
    }

    @Override
    public void ensure(List<Network> existing) {
        ensure(existing, true);
    }

    @Override
    public void ensureExisting(List<Network> existing) {
        ensure(existing, false);
    }

    private void ensure(List<Network> existing, boolean makeMissing) {
        try (Nftables nft = Nftables.open(host)) {
            Ruleset now = nft.listWithoutElements(GatunRuleset.TABLE);
            if (now.tables().isEmpty()) {
                if (makeMissing) {
                    GatunRuleset.create(nft);
                    tableLeftToCommit.set(false);
                } else {
                    tableLeftToCommit.set(true);
                }
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
    public boolean guardsLoopback() {
        return reading(nft -> GatunRuleset.guardsLoopback(nft.listWithoutElements(GatunRuleset.TABLE)));
    }

    @Override
    public void teardown() {
        try (Nftables nft = Nftables.open(host)) {
            nft.transaction().destroy(GatunRuleset.TABLE).commit();
        }
    }

    @Override
    public void network(BridgeRules rules, boolean add) {
        try (Nftables nft = Nftables.open(host)) {
            try {
                entries(nft, rules, add, false);
            } catch (NetlinkException e) {
                if (add || !e.isNotFound()) {
                    throw e;
                }
                // A network made for its first container's ports that never came has no entries,
                // and perhaps no table: what is there goes, and nothing is an error.
                if (GatunRuleset.isThere(nft)) {
                    entries(nft, rules, false, true);
                }
            }
        }
    }

    /** One transaction of a network's entries: added, deleted, or deleted where they are ({@code ifThere}). */
    private static void entries(Nftables nft, BridgeRules rules, boolean add, boolean ifThere) {
        Transaction tx = nft.transaction();
        NetworkEntries.of(rules).forEach((set, e) -> {
            if (add || ifThere) {
                // Added first, so that the delete finds it: a destroy in one batch (see Transaction).
                tx.addElements(set, List.of(e));
            }
            if (!add) {
                tx.deleteElements(set, List.of(e));
            }
        });
        tx.commit();
    }

    @Override
    public boolean entriesWithMappings() {
        return true;
    }

    @Override
    public boolean countsPorts() {
        return true;
    }

    @Override
    public void outside(OutsideTarget target, boolean add) {
        try (Nftables nft = Nftables.open(host)) {
            Transaction tx = nft.transaction();
            NftSet set = OutsideTargets.set(target);
            if (add) {
                tx.addElements(set, List.of(OutsideTargets.element(target)));
            } else {
                tx.deleteElements(set, List.of(OutsideTargets.element(target)));
            }
            tx.commit();
        }
    }

    @Override
    public List<OutsideTarget> outsideTargets() {
        return reading(nft -> OutsideTargets.read(nft, nft.listWithoutElements(GatunRuleset.TABLE)));
    }

    @Override
    public Restored restore(List<Network> networks, List<PortMapping> wanted) {
        return repair.restore(networks, wanted);
    }

    @Override
    public Restored restoreElements(List<Network> networks, List<PortMapping> wanted, Collection<String> setNames) {
        return repair.restoreElements(networks, wanted, setNames);
    }

    @Override
    public MappingStore openStore(Supplier<CountedSubnets> counted) {
        return new NftablesMappingStore(Nftables.open(host), counted, tableLeftToCommit);
    }

    @Override
    public FollowedMappingStore openFollowedStore(Supplier<CountedSubnets> counted, MapChanges changes) {
        return new FollowedMappingStore(Nftables.open(host), counted, changes, tableLeftToCommit);
    }

    /** The four maps' mappings (a missing map has none: see MappingElements). */
    @Override
    public List<PortMapping> mappings() {
        return reading(MappingElements::all);
    }

    @Override
    public List<PortTraffic> traffic() {
        return reading(MappingElements::traffic);
    }

    /**
     * {@code read} on the kept reading socket, one reader at a time (a socket carries one dump at
     * a time), opened at the first. A reading that failed may have left replies unread on it, so
     * the next one starts on a new socket.
     */
    private <T> T reading(Function<Nftables, T> read) {
        readerLock.lock();
        try {
            if (reader == null) {
                reader = Nftables.open(host);
            }
            try {
                return read.apply(reader);
            } catch (RuntimeException e) {
                closeReader();
                throw e;
            }
        } finally {
            readerLock.unlock();
        }
    }

    @Override
    public void close() {
        readerLock.lock();
        try {
            closeReader();
        } finally {
            readerLock.unlock();
        }
    }

    private void closeReader() {
        if (reader != null) {
            reader.close();
            reader = null;
        }
    }
}
