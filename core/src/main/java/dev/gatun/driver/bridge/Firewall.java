package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.foreign.ForeignFirewalls;

import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * What a driver needs from a packet filter: the static ruleset, the entries of each network,
 * and the store of published-port mappings. The nftables and iptables drivers differ only here.
 */
interface Firewall {

    /** The driver's name as users choose it: "nftables", "iptables-legacy", ... */
    String name();

    /**
     * Makes the static part of the ruleset unless it is there; where the packet filter allows,
     * also brings one of an older or damaged shape up to date, keeping {@code existing}
     * networks' entries and the mappings present.
     */
    void ensure(List<Network> existing);

    /**
     * {@link #ensure}, except that a ruleset not there at all is not made here: the first commit
     * of a network's entries with mappings makes it in the same transaction (see
     * {@link #entriesWithMappings}). Where entries do not go with mappings, as ensure.
     */
    default void ensureExisting(List<Network> existing) {
        ensure(existing);
    }

    /** Adds (or with {@code add} false removes) a bridge's entries, as {@code rules} describe them. */
    void network(BridgeRules rules, boolean add);

    /**
     * Whether a network's entries can go in with mappings, in one transaction of the store's
     * ({@link MappingStore.View#commit(java.util.Collection, java.util.Collection, java.util.Collection)}),
     * and be added again where they are already without changing anything: what has transactions
     * and sets (nftables), not rule lists (iptables).
     */
    default boolean entriesWithMappings() {
        return false;
    }

    /** Whether this firewall keeps per-mapping counters (nftables' map elements can carry them). */
    default boolean countsPorts() {
        return false;
    }

    /**
     * Adds (or with {@code add} false removes) a container outside gatun's networks whose
     * localhost and hairpin connections to published ports are to be masqueraded.
     */
    void outside(OutsideTarget target, boolean add);

    /** The targets {@link #outside} added, as they are now. */
    List<OutsideTarget> outsideTargets();

    /** Whether the drop of 127.0.0.0/8 (::1) that did not arrive on lo is in place (see GatunRuleset). */
    boolean guardsLoopback();

    /** Removes everything {@link #ensure} made; called when the last network is gone. */
    void teardown();

    /** What a repair put back: one line per thing, and the mappings among them (their map elements were gone). */
    record Restored(List<String> lines, List<PortMapping> mappings) {
        static final Restored NOTHING = new Restored(List.of(), List.of());
    }

    /**
     * Puts back what someone else removed: the static ruleset, the entries of {@code networks},
     * and those of {@code wanted} whose host port nobody holds now. Empty when everything was in place.
     */
    Restored restore(List<Network> networks, List<PortMapping> wanted);

    /**
     * {@link #restore} for when only elements of the named sets of the ruleset were removed: a
     * packet filter that can read those alone overrides this to save reading everything.
     */
    default Restored restoreElements(List<Network> networks, List<PortMapping> wanted, Collection<String> sets) {
        return restore(networks, wanted);
    }

    /** The other firewalls of the host, as this packet filter must open them for gatun's bridges. */
    ForeignFirewalls foreignFirewalls();

    /**
     * Opens the mapping store; called on the committer thread, which then owns it. Mappings it
     * adds for which {@code counted} holds count their traffic, where {@link #countsPorts}.
     */
    MappingStore openStore(Supplier<CountedSubnets> counted);

    /**
     * A store that plans from memory kept in step by {@code changes}, which hears every
     * notification of the kernel's from now on; null where the kernel sends none (legacy iptables).
     */
    default FollowedMappingStore openFollowedStore(Supplier<CountedSubnets> counted, MapChanges changes) {
        return null;
    }

    /** The mappings as they are now, from any thread. */
    List<PortMapping> mappings();

    /** {@link #mappings} with their counts, where they have a counter. */
    default List<PortTraffic> traffic() {
        return mappings().stream().map(m -> new PortTraffic(m, null)).toList();
    }

    /** Lets go of what it keeps open between calls (a reading socket); the driver closes it with itself. */
    default void close() {
    }
}
