package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.HealableDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.LocalnetRoute;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.NotFoundException;
import dev.gatun.InetText;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.foreign.AcceptMark;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;

import java.time.Duration;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The driver contract on Linux bridges: rtnetlink for the topology, a {@link Firewall} (nftables
 * or iptables) for the packet filter. Networks are bridges whose alias describes them
 * ({@link BridgeNetworks}); endpoints are bridge ports whose alias describes the container
 * ({@link BridgeEndpoints}); published ports live in the firewall with their owner (to
 * containers on its networks, {@link PublishedPorts}; outside them, {@link OutsidePublishing};
 * listed by {@link PortListings}). Nothing lives elsewhere. This class orders the steps of each call
 * and holds the locks that keep changes to the topology one at a time and publishes apart from
 * the removals that could undo them.
 */
public final class BridgeDriver implements HealableDriver {

    private final NetworkNamespace host;
    private final Firewall firewall;
    private final Publisher publisher;
    /** Held while networks, endpoints or the static ruleset change, and by repairs. */
    private final Object topology = new Object();
    /**
     * Shared by the calls that publish (to a network or outside them, replace included), held
     * alone by the removals that take a network's ports or tear gatun's table down after the
     * last network (a network's removal, an adopted bridge's release); taken before
     * {@link #topology}. A publish committed during a removal would leave its mappings (and,
     * where they ride along, the network's entries and gatun's table) for a network that is
     * gone, or be taken with the table it found. Unpublishes need not wait: a removal only
     * removes more.
     */
    private final ReadWriteLock removal = new ReentrantReadWriteLock();
    /** Networks and local addresses for publish and unpublish, exact without a lookup per call. */
    private final HostCache cache;
    private final BridgeNetworks networks;
    private final BridgeEndpoints endpoints;
    private final PublishedPorts ports;
    private final OutsidePublishing outside;
    private final PortListings listings;
    private final OtherFirewalls others;
    /** Every drain of this driver shares its readings of the conntrack table. */
    private final FlowDrain drains;

    private BridgeDriver(NetworkNamespace host, Firewall firewall) {
        this.host = host;
        this.firewall = firewall;
        this.networks = new BridgeNetworks(host, firewall);
        this.endpoints = new BridgeEndpoints(host);
        this.cache = new HostCache(host, networks::list, () -> endpoints.list(null));
        this.publisher = new Publisher(host, firewall, cache::localAddresses, cache::counted, Conntrack::open);
        Runnable ensureTable = () -> {
            synchronized (topology) {
                // No network of gatun's may exist yet: the table must.
                firewall.ensure(networks.withAdopted());
            }
        };
        this.ports = new PublishedPorts(firewall, publisher, ensureTable, this::completeNetwork);
        this.outside = new OutsidePublishing(host, firewall, publisher, networks::list, networks::adoptedSubnets, ensureTable);
        this.listings = new PortListings(host, firewall, networks::list);
        this.others = new OtherFirewalls(firewall);
        this.drains = new FlowDrain(host);
    }

    /** The driver on nftables: gatun's own table, changes as map elements in one transaction. */
    public static BridgeDriver nftables(NetworkNamespace host) {
        NativeLibraries.requireNftables();
        // Checked here, where a bad GATUN_ACCEPT_MARK is one clear error, not a failed class initialisation.
        AcceptMark.bits();
        return new BridgeDriver(host, new NftablesFirewall(host));
    }

    /**
     * The driver on iptables: {@code variant} is "iptables" (the system's), "iptables-legacy" or
     * "iptables-nft". Programs are looked up on {@code searchPath} (null: this process's PATH).
     */
    public static BridgeDriver iptables(NetworkNamespace host, String variant, String searchPath) {
        IptablesFirewall.Variant v = switch (variant) {
            case "iptables" -> IptablesFirewall.Variant.SYSTEM;
            case "iptables-legacy" -> IptablesFirewall.Variant.LEGACY;
            case "iptables-nft" -> IptablesFirewall.Variant.NFT;
            default -> throw new InvalidInputException("unknown iptables variant '" + variant
                    + "' (expected iptables, iptables-legacy or iptables-nft)");
        };
        String path = searchPath != null ? searchPath
                : System.getenv().getOrDefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        return new BridgeDriver(host, new IptablesFirewall(host, v, path));
    }

    /** The name of the packet-filter backend: "nftables", "iptables-legacy", ... */
    public String firewall() {
        return firewall.name();
    }

    @Override
    public NetworkNamespace host() {
        return host;
    }

    // ------------------------------------------------------------------ networks

    @Override
    public Network createNetwork(NetworkSpec spec) {
        return create(spec, true);
    }

    @Override
    public Network createNetworkForPublish(NetworkSpec spec) {
        // Without a firewall that carries them with the ports, the entries go in now.
        return create(spec, !firewall.entriesWithMappings());
    }

    @Override
    public void completeNetwork(String name) {
        synchronized (topology) {
            // Looked up under the lock: a network another thread removed is not found, not made again in part.
            ports.complete(network(name));
        }
    }

    private Network create(NetworkSpec spec, boolean entries) {
        synchronized (topology) {
            cache.forget();
            networks.create(spec, entries);
            cache.forget();
            openOtherFirewalls();
            return network(spec.name());
        }
    }

    /** The first few endpoints by owner and address, for a refusal that names them. */
    private static String named(List<Endpoint> attached) {
        List<String> some = attached.stream().limit(3)
                .map(e -> e.owner() + " at " + (e.ip() != null ? InetText.of(e.ip()) : InetText.of(e.ip6()))).toList();
        return String.join(", ", some) + (attached.size() > 3 ? " and " + (attached.size() - 3) + " more" : "");
    }

    @Override
    public void deleteNetwork(String name, boolean force) {
        alone(() -> deleteNetworkAlone(name, force));
    }

    /** {@code removal}, under {@link #removal}'s write lock: no publish runs meanwhile. */
    private void alone(Runnable removal) {
        Lock alone = this.removal.writeLock();
        alone.lock();
        try {
            removal.run();
        } finally {
            alone.unlock();
        }
    }

    private void deleteNetworkAlone(String name, boolean force) {
        synchronized (topology) {
            cache.forget();
            Network n = network(name);
            List<Endpoint> attached = endpoints.list(name);
            if (!attached.isEmpty() && !force) {
                boolean one = attached.size() == 1;
                String them = one ? "it" : "them";
                throw new ConflictException("network " + name + " has " + attached.size() + (one ? " endpoint" : " endpoints")
                        + " attached (" + named(attached) + "); detach " + them + " first, or remove the network with force,"
                        + " which detaches " + them);
            }
            for (Endpoint e : attached) {
                detachEndpoint(e);
            }
            ports.unpublishAll(n);
            networks.remove(n);
            others.release(n.bridge());
            // With the last network gone this removes all that gatun added to other firewalls.
            openOtherFirewalls();
            if (networks.list().isEmpty() && networks.adopted().isEmpty() && firewall.mappings().isEmpty()) {
                // The last network is gone, and no port published outside them is left: leave
                // nothing of gatun in the packet filter.
                firewall.teardown();
            }
        }
    }

    @Override
    public Network network(String name) {
        Network n = cache.network(name);
        if (n == null) {
            throw new NotFoundException("network " + name + " does not exist");
        }
        return n;
    }

    @Override
    public List<Network> networks() {
        return networks.list();
    }

    @Override
    public void adoptBridge(AdoptedBridge bridge) {
        synchronized (topology) {
            networks.adopt(bridge);
            openOtherFirewalls();
        }
    }

    @Override
    public void releaseBridge(AdoptedBridge bridge) {
        alone(() -> releaseBridgeAlone(bridge));
    }

    private void releaseBridgeAlone(AdoptedBridge bridge) {
        synchronized (topology) {
            networks.release(bridge);
            others.release(bridge.bridge());
            openOtherFirewalls();
            if (networks.list().isEmpty() && networks.adopted().isEmpty() && firewall.mappings().isEmpty()) {
                firewall.teardown();
            }
        }
    }

    @Override
    public List<AdoptedBridge> adoptedBridges() {
        return networks.adopted();
    }

    // ------------------------------------------------------------------ endpoints

    @Override
    public Endpoint attach(EndpointSpec spec) {
        String ifname = BridgeEndpoints.ifname(spec);
        synchronized (topology) {
            return endpoints.attach(network(spec.network()), spec, ifname);
        }
    }

    @Override
    public void detach(String network, NetworkNamespace container, String ifname) {
        String name = InterfaceNames.check(ifname == null ? "eth0" : ifname);
        synchronized (topology) {
            network(network);
            Endpoint e = endpoints.find(network, container, name)
                    .orElseThrow(() -> new NotFoundException("no endpoint " + name + " of " + container.describe()
                            + " on network " + network));
            detachEndpoint(e);
        }
    }

    @Override
    public void detachOwner(String network, String owner) {
        synchronized (topology) {
            network(network);
            List<Endpoint> owned = endpoints.list(network).stream().filter(e -> e.owner().equals(owner)).toList();
            if (owned.isEmpty()) {
                throw new NotFoundException("no endpoint of owner " + owner + " on network " + network);
            }
            owned.forEach(this::detachEndpoint);
        }
    }

    /** Its mappings first: a port must not point at an address that a new endpoint may get. */
    private void detachEndpoint(Endpoint e) {
        ports.unpublishAll(e.network(), e.ip6() == null ? List.of(e.ip()) : List.of(e.ip(), e.ip6()));
        endpoints.remove(e);
    }

    @Override
    public List<Endpoint> endpoints(String network) {
        return endpoints.list(network);
    }

    @Override
    public List<String> verify(Endpoint e, NetworkNamespace container) {
        return endpoints.verify(network(e.network()), e, container);
    }

    // ------------------------------------------------------------------ published ports

    @Override
    public List<PortMapping> publish(PortRequest request, HostPortCheck check) {
        return beforeRemoval(() -> ports.publish(network(request.network()), request.containerIp(), request.ports(),
                request.owner(), check));
    }

    @Override
    public List<PortMapping> publishAll(PortsByAddress request, HostPortCheck check) {
        return beforeRemoval(() -> ports.publishAll(network(request.network()), request.byAddress(), request.owner(), check));
    }

    @Override
    public int drain(List<PortMapping> mappings, Duration timeout) {
        return drains.await(mappings, timeout);
    }

    @Override
    public Replacement replace(PortRequest request, HostPortCheck check, boolean keepUdpFlows) {
        String network = request.network();
        InetAddress containerIp = request.containerIp();
        return beforeRemoval(() -> {
            Network n = network(network);
            // The port's traffic moves at the commit: a target no container has would drop it.
            if (!cache.hasEndpoint(n.name(), containerIp)) {
                throw new NotFoundException("replace ports on network " + network + ": no endpoint of it has address "
                        + InetText.of(containerIp) + " (attach the new container first; nothing was changed)");
            }
            return ports.replace(n, containerIp, request.ports(), request.owner(), check, keepUdpFlows);
        });
    }

    /**
     * {@code change}, a publish with its lookups, done before or after any removal, never across
     * one: after a network's removal, that network is not found.
     */
    private <T> T beforeRemoval(Supplier<T> change) {
        Lock shared = removal.readLock();
        shared.lock();
        try {
            return change.get();
        } finally {
            shared.unlock();
        }
    }

    @Override
    public List<PortMapping> unpublish(PortRequest request) {
        return ports.unpublish(network(request.network()), request.containerIp(), request.ports(), request.owner());
    }

    @Override
    public List<PortMapping> publishOutside(PortRequest request, HostPortCheck check) {
        return beforeRemoval(() -> outside.publish(request.network(), request.containerIp(), request.ports(),
                request.owner(), check));
    }

    @Override
    public List<PortMapping> unpublishOutside(PortRequest request) {
        return outside.unpublish(request.network(), request.containerIp(), request.ports(), request.owner());
    }

    @Override
    public List<OutsideChange.Outcome> changeOutside(OutsideChange change) {
        return beforeRemoval(() -> outside.change(change));
    }

    @Override
    public List<PortMapping> publishedOutside() {
        return listings.publishedOutside();
    }

    @Override
    public List<PortMapping> published(String network) {
        return listings.published(network == null ? networks() : List.of(network(network)));
    }

    @Override
    public List<PortMapping> allPublished() {
        return listings.all();
    }

    @Override
    public List<PortTraffic> allTraffic() {
        return listings.allTraffic();
    }

    @Override
    public List<PortTraffic> traffic(String network) {
        return listings.traffic(network == null ? networks() : List.of(network(network)));
    }

    @Override
    public List<String> hostPortsInUse() {
        return listings.sharedWithHostSockets(published(null));
    }

    @Override
    public void listen(PortListener listener) {
        publisher.listen(listener);
    }

    @Override
    public Consumer<RulesetEvent> followRuleset() {
        Consumer<RulesetEvent> follower = publisher.follow();
        // Long-running, so the link watch starts and the host's networks and addresses are read
        // now, as the first publish would read them.
        cache.counted();
        cache.localAddresses();
        return follower;
    }

    /** How often publishing read the kernel rather than answering from memory (-1: it keeps none), for tests. */
    long mapReads() {
        return publisher.reads();
    }

    // ------------------------------------------------------------------ repair

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        synchronized (topology) {
            List<String> repaired = new ArrayList<>(clientsOf(firewall.restore(networks.withAdopted(), mappings)));
            repaired.addAll(outside.restore(mappings));
            repaired.addAll(openOtherFirewalls());
            return repaired;
        }
    }

    @Override
    public List<String> repairOwnRuleset(List<PortMapping> mappings) {
        synchronized (topology) {
            List<String> repaired = new ArrayList<>(clientsOf(firewall.restore(networks.withAdopted(), mappings)));
            repaired.addAll(outside.restore(mappings));
            return repaired;
        }
    }

    /**
     * A repair's lines, after the conntrack entries that UDP clients of the mappings it put back
     * made while they were gone: their datagrams went to the host untranslated, and udpheard,
     * gone with the table or not, is not asked (see {@link UdpConntrackCleanup}).
     */
    private List<String> clientsOf(Firewall.Restored restored) {
        if (restored.mappings().stream().anyMatch(m -> m.protocol() == Protocol.UDP)) {
            try (Conntrack conntrack = Conntrack.open(host)) {
                new UdpConntrackCleanup(conntrack, Set::copyOf, cache::localAddresses, host.describe())
                        .afterRepair(restored.mappings());
            }
        }
        return restored.lines();
    }

    @Override
    public List<String> repairOtherFirewalls() {
        synchronized (topology) {
            return openOtherFirewalls();
        }
    }

    @Override
    public boolean otherFirewallsNeedPolling() {
        return others.needPolling();
    }

    @Override
    public List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        synchronized (topology) {
            List<String> repaired = new ArrayList<>(clientsOf(firewall.restoreElements(networks.withAdopted(), mappings,
                    sets)));
            if (sets.contains(GatunRuleset.OUTSIDE4.name()) || sets.contains(GatunRuleset.OUTSIDE6.name())) {
                repaired.addAll(outside.restore(mappings));
            }
            return repaired;
        }
    }

    @Override
    public List<LocalnetRoute> localnetRoutes() {
        Map<String, String> byGatun = new HashMap<>();
        for (Network n : networks.list()) {
            byGatun.put(n.bridge(), "gatun network " + n.name());
        }
        for (AdoptedAlias a : networks.adoptedAliases()) {
            if (a.localnetByGatun()) {
                byGatun.put(a.bridge().bridge(), "adopted bridge " + a.bridge().name() + " (its containers' 127.0.0.1 ports)");
            }
        }
        for (OutsideTarget t : firewall.outsideTargets()) {
            if (t.localnetByGatun()) {
                byGatun.putIfAbsent(t.hostIfname(), "the host end of container " + InetText.of(t.containerIp())
                        + " outside gatun's networks (its 127.0.0.1 ports)");
            }
        }
        boolean guarded = firewall.guardsLoopback();
        Sysctls sysctls = new Sysctls(host);
        List<LocalnetRoute> out = new ArrayList<>();
        if ("1".equals(sysctls.read("ipv4/conf/all/route_localnet"))) {
            out.add(new LocalnetRoute("all", null, guarded));
        }
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            for (Link l : rt.links()) {
                if ("1".equals(routeLocalnet(sysctls, l.name()))) {
                    out.add(new LocalnetRoute(l.name(), byGatun.get(l.name()), guarded));
                }
            }
        }
        return out;
    }

    /** An interface's route_localnet; null for one without IPv4 settings (or gone meanwhile). */
    private static String routeLocalnet(Sysctls sysctls, String ifname) {
        try {
            return sysctls.read("ipv4/conf/" + ifname + "/route_localnet");
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public List<ForeignDrop> foreignDrops() {
        return others.survey(bridges());
    }

    /** Opens other firewalls for the bridges of every network (none: removes what gatun added). */
    private List<String> openOtherFirewalls() {
        return others.open(bridges());
    }

    private List<String> bridges() {
        return networks.withAdopted().stream().map(Network::bridge).toList();
    }

    @Override
    public void close() {
        publisher.close();
        cache.close();
        drains.close();
        firewall.close();
    }
}
