package dev.gatun.driver;

import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;

import java.net.InetAddress;
import java.util.Collection;
import java.util.List;

/**
 * The backend-driver contract an engine calls: container networks, their endpoints, and
 * published ports with Docker's {@code -p} semantics. Implementations keep all state in the
 * kernel, so a fresh instance (in any process) sees what another made; {@link SelfHealingDriver}
 * also keeps in memory what it puts back after someone else removes it.
 *
 * <p>Errors: {@link dev.gatun.InvalidInputException} for bad input (nothing is sent), its
 * subclass {@link NotFoundException} for a network or endpoint that does not exist,
 * {@link ConflictException} for collisions, {@link dev.gatun.PrivilegeException} for missing
 * privilege, other {@link dev.gatun.GatunException}s when the kernel or a tool fails.
 */
public interface NetworkDriver extends AutoCloseable {

    /** The namespace that plays the host. */
    NetworkNamespace host();

    /** Creates a network: a bridge with a fixed MAC, gateway addresses, forwarding, and its firewall entries. */
    Network createNetwork(NetworkSpec spec);

    /** Deletes a network; with endpoints attached it refuses unless {@code force}, which detaches them first. */
    void deleteNetwork(String name, boolean force);

    List<Network> networks();

    /** The network with this name; a {@link NotFoundException} naming it if there is none. */
    default Network network(String name) {
        return networks().stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> new NotFoundException("network " + name + " does not exist"));
    }

    /**
     * Attaches a container: a veth pair, the container end addressed, up, with a default route.
     * Without a container namespace in the spec, the container end stays in the host namespace,
     * down and unaddressed, for an engine that moves and configures it itself.
     */
    Endpoint attach(EndpointSpec spec);

    /** Detaches every endpoint of {@code owner} on the network, and removes the ports published to them. */
    void detachOwner(String network, String owner);

    /** Detaches the container's interface and removes the ports published to its addresses. */
    void detach(String network, NetworkNamespace container, String ifname);

    List<Endpoint> endpoints(String network);

    /**
     * What of an attached endpoint is missing in the kernel: its host end on the network's
     * bridge, its interface in {@code container}, and that interface's addresses. One phrase per
     * missing thing; empty when it is whole.
     */
    default List<String> verify(Endpoint endpoint, NetworkNamespace container) {
        return List.of();
    }

    /**
     * Publishes ports to {@code containerIp} in one transaction. A host port held by another
     * owner, or by a socket of the host ({@link HostPortCheck#CHECK}), is a
     * {@link ConflictException} naming the holder, and nothing changes; publishing the same
     * mapping again by its owner changes nothing. Returns the mappings now in place.
     */
    default List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return publish(network, containerIp, ports, owner, HostPortCheck.CHECK);
    }

    /** As {@link #publish(String, InetAddress, List, String)}, asking the host's sockets first only with CHECK. */
    List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                              HostPortCheck check);

    /**
     * Removes {@code owner}'s mappings to {@code containerIp}: those of {@code ports}, or all of
     * them when {@code ports} is empty. A listed port held by another owner is refused.
     */
    List<PortMapping> unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner);

    /**
     * Publishes ports to a container on none of this driver's networks, whose network another
     * program made (a CNI chain in which gatun follows the {@code bridge} plugin): only the port
     * entries, nothing for its bridge. {@code label} is the network name the returned mappings
     * carry; the kernel keeps only the owner. Otherwise as {@link #publish}, but the host's
     * sockets are not asked (the runtime of a CNI chain holds the ports itself); an address on
     * one of this driver's networks is refused (publish there).
     */
    default List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot publish outside its networks");
    }

    /** As {@link #unpublish}, for mappings made by {@link #publishOutside}. */
    default List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot publish outside its networks");
    }

    /** The published ports whose container address is on none of this driver's networks; their network is null. */
    default List<PortMapping> publishedOutside() {
        return List.of();
    }

    /**
     * Tells {@code listener} of every publish and unpublish this driver commits from now on
     * (null: nobody), replacing the listener before.
     */
    void listen(PortListener listener);

    /** The published ports of one network, or of all when {@code network} is null. */
    List<PortMapping> published(String network);

    /**
     * For each published port that a socket of the host holds now (it came after the port was
     * published: a publish checks first), one line naming the port, the socket and its process.
     */
    default List<String> hostPortsInUse() {
        return List.of();
    }

    /**
     * Puts back what someone else removed of this driver's packet-filter state (a flushed
     * ruleset, a firewall reload): the static ruleset, every network's entries, and those of
     * {@code mappings} that are missing and whose host port nobody else holds now. Returns one
     * line per thing put back; empty when everything was in place.
     */
    List<String> repair(List<PortMapping> mappings);

    /**
     * As {@link #repair}, but only this driver's own ruleset, not what it added to other
     * firewalls: for a caller that knows only gatun's table changed.
     */
    default List<String> repairOwnRuleset(List<PortMapping> mappings) {
        return repair(mappings);
    }

    /**
     * As {@link #repair}, but only what this driver added to other firewalls, not its own
     * ruleset: for a caller that learns of changes to its own ruleset in other ways.
     */
    default List<String> repairOtherFirewalls() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot look at other firewalls");
    }

    /**
     * Whether what {@link #repairOtherFirewalls} keeps in place can change without an nftables
     * notification (legacy iptables sends none), so that a caller who watches those must still
     * look now and then. True when the driver cannot tell.
     */
    default boolean otherFirewallsNeedPolling() {
        return true;
    }

    /**
     * As {@link #repairOwnRuleset}, for a caller that knows only elements of the named sets of
     * this driver's own table were removed: a driver that can reads just those sets.
     */
    default List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        return repairOwnRuleset(mappings);
    }

    /**
     * Every place where another firewall of the host drops forwarded traffic, and whether this
     * driver's bridges get through it (see {@link dev.gatun.driver.foreign.ForeignFirewalls}).
     */
    default List<ForeignDrop> foreignDrops() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot look at other firewalls");
    }

    @Override
    void close();
}
