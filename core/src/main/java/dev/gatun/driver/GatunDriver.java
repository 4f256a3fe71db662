package dev.gatun.driver;

import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;

import java.net.InetAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * gatun's own driver past the engine contract ({@link NetworkDriver}): checking an endpoint in
 * the kernel, ports published to containers outside its networks, host sockets on published
 * ports, repairs of what someone else removed, and other firewalls' drops. Every method is
 * abstract, so a decorator ({@link SelfHealingDriver}) must say what each does.
 */
public interface GatunDriver extends NetworkDriver {

    /**
     * What of an attached endpoint is missing in the kernel: its host end on the network's
     * bridge, its interface in {@code container}, and that interface's addresses. One phrase per
     * missing thing; empty when it is whole.
     */
    List<String> verify(Endpoint endpoint, NetworkNamespace container);

    /**
     * {@link #createNetwork} at a network's first container, by an engine that makes networks as
     * their containers come (CNI, netavark): the bridge now, and its packet-filter entries
     * (masquerade, icc, internal, its place among gatun's networks) in the transaction of the
     * {@link #publishAll} that follows, with gatun's table if the host has none yet, so that the
     * container's setup changes the packet filter once. Until then the bridge is not filtered at
     * all, so the caller starts nothing on it before that publishAll, and a setup without ports
     * that finds the network calls {@link #completeNetwork} (this one may die before its ports).
     * Where the packet filter has no transactions (iptables) the entries go in now, as with
     * createNetwork.
     */
    Network createNetworkForPublish(NetworkSpec spec);

    /**
     * Adds a network's packet-filter entries where they are missing (with gatun's table if it is
     * missing too): for a network made by {@link #createNetworkForPublish} whose publishAll failed
     * before its commit, or that a setup without ports finds. Where they are all in place the
     * kernel changes nothing (no generation, no notification); with iptables it does nothing.
     */
    void completeNetwork(String name);

    /**
     * {@link #publish} to each address of one container on {@code network} (its IPv4 and its IPv6
     * one) as one request: every port or none, in one transaction. An address without ports is
     * left out; none with ports is refused, and so is more than one without an {@code owner}.
     * Where the packet filter has transactions, the network's own entries are added in the same
     * one where they are missing (a network made by {@link #createNetworkForPublish}, or one a
     * crash left without them), also when the ports are refused for a conflict or a held port;
     * a failure before the commit (bad input, the kernel's) leaves them to {@link #completeNetwork}.
     * The mappings now in place, in the order asked.
     */
    List<PortMapping> publishAll(String network, Map<InetAddress, List<PortSpec>> ports, String owner, HostPortCheck check);

    /**
     * Publishes ports to a container on none of this driver's networks, whose network another
     * program made (a CNI chain in which gatun follows the {@code bridge} plugin, dockerd's
     * bridges): only the port entries, nothing for its bridge. {@code label} is the network name
     * the returned mappings carry; the kernel keeps only the owner. Otherwise as
     * {@link NetworkDriver#publish}: {@code check} says whether the host's sockets are asked
     * ({@link HostPortCheck#SKIP} for a CNI chain, whose runtime holds the ports itself) and whose
     * sockets are the engine's reservation. An address on one of this driver's networks is refused
     * (publish there).
     */
    List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check);

    /** As {@link NetworkDriver#unpublish}, for mappings made by {@link #publishOutside}. */
    List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner);

    /**
     * {@link #unpublishOutside} and {@link #publishOutside} for each address of {@code change},
     * the unpublishes first (a key moving to another address is free for it), committed in one
     * transaction: a request refused (a port held, a key gone) changes nothing of its own and is
     * said in its outcome, the others go in. Every address and port is checked before anything
     * is sent. One outcome per address and part, unpublishes first, each in the change's order.
     * A failure that is no one request's (a target of {@link #publishOutside} that cannot be
     * added, a read or commit the kernel fails) is thrown instead.
     */
    List<OutsideChange.Outcome> changeOutside(OutsideChange change);

    /** The published ports whose container address is on none of this driver's networks; their network is null. */
    List<PortMapping> publishedOutside();

    /**
     * Every published port: {@link #published published(null)}, then {@link #publishedOutside},
     * from one reading of the kernel.
     */
    List<PortMapping> allPublished();

    /** {@link #allPublished} with each mapping's counts ({@link #traffic}; null outside gatun's networks). */
    List<PortTraffic> allTraffic();

    /**
     * For each published port that a socket of the host holds now (it came after the port was
     * published: a publish checks first), one line naming the port, the socket and its process.
     */
    List<String> hostPortsInUse();

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
    List<String> repairOwnRuleset(List<PortMapping> mappings);

    /**
     * As {@link #repair}, but only what this driver added to other firewalls, not its own
     * ruleset: for a caller that learns of changes to its own ruleset in other ways.
     */
    List<String> repairOtherFirewalls();

    /**
     * Whether what {@link #repairOtherFirewalls} keeps in place can change without an nftables
     * notification (legacy iptables sends none), so that a caller who watches those must still
     * look now and then. True when the driver cannot tell.
     */
    boolean otherFirewallsNeedPolling();

    /**
     * As {@link #repairOwnRuleset}, for a caller that knows only elements of the named sets of
     * this driver's own table were removed: a driver that can reads just those sets.
     */
    List<String> repairElements(Collection<String> sets, List<PortMapping> mappings);

    /**
     * Every place where another firewall of the host drops forwarded traffic, and whether this
     * driver's bridges get through it (see {@link dev.gatun.driver.foreign.ForeignFirewalls}).
     */
    List<ForeignDrop> foreignDrops();

    /**
     * Every interface of the host that routes 127.0.0.0/8, what of gatun's turned that on, and
     * whether gatun's drop of 127.0.0.0/8 that did not come from {@code lo} guards it.
     */
    List<LocalnetRoute> localnetRoutes();

    /**
     * Keeps the packet filter of another program's bridge as of a network of gatun's (see
     * {@link AdoptedBridge}); the bridge's alias remembers it. Its route_localnet is turned on
     * (127.0.0.1 to its containers' ports). Adopting it again with the same values changes
     * nothing (but a route_localnet turned off since); with others, replaces them.
     */
    void adoptBridge(AdoptedBridge bridge);

    /**
     * Takes an adopted bridge's entries out of the packet filter, and turns its route_localnet
     * off if gatun turned it on; the bridge stays (or is gone already).
     */
    void releaseBridge(AdoptedBridge bridge);

    /** The bridges adopted, read from the kernel. */
    List<AdoptedBridge> adoptedBridges();

    /**
     * For a process that hears every nftables notification of the driver's namespace (as
     * {@link SelfHealingDriver} does): the driver plans publishes from memory kept in step with
     * them, and commits each in one round trip instead of reading first. The returned consumer
     * must be handed every notification, in order, from before the next publish on (memory is
     * read at it). Null if the driver cannot
     * (legacy iptables sends none); it then reads, as it does until this is called.
     */
    Consumer<RulesetEvent> followRuleset();
}
