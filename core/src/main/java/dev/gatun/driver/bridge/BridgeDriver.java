package dev.gatun.driver.bridge;

import dev.gatun.internal.InetText;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.foreign.AcceptMark;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.internal.Rollback;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;
import dev.gatun.sockdiag.SocketOwners;
import dev.gatun.rtnl.ContainerInterface;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;

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
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The driver contract on Linux bridges: rtnetlink for the topology, a {@link Firewall} (nftables
 * or iptables) for the packet filter. Networks are bridges whose alias describes them;
 * endpoints are bridge ports whose alias describes the container; published ports live in the
 * firewall with their owner. Nothing lives elsewhere.
 */
public final class BridgeDriver implements NetworkDriver {

    private static final int MAX_OWNER_BYTES = dev.gatun.nft.NftNames.MAX_COMMENT_BYTES;

    private final NetworkNamespace host;
    private final Firewall firewall;
    /** Other tools' firewalls, opened for gatun's bridges; made at first use (a publish never needs it). */
    private ForeignFirewalls foreign;
    private final Publisher publisher;
    private final Object topology = new Object();
    /** Networks and local addresses for publish and unpublish, exact without a lookup per call. */
    private final HostCache cache;

    private BridgeDriver(NetworkNamespace host, Firewall firewall) {
        this.host = host;
        this.firewall = firewall;
        this.cache = new HostCache(host, this::networks);
        this.publisher = new Publisher(host, firewall, cache::localAddresses);
    }

    /** The driver on nftables: gatun's own table, changes as map elements in one transaction. */
    public static BridgeDriver nftables(NetworkNamespace host) {
        dev.gatun.internal.NativeLibraries.requireNftables();
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
        checkNetworkName(spec.name());
        if (spec.subnet4() == null || spec.subnet4().isIpv6()) {
            throw new InvalidInputException("network " + spec.name() + " needs an IPv4 subnet, such as 10.88.0.0/16");
        }
        if (spec.subnet6() != null && !spec.subnet6().isIpv6()) {
            throw new InvalidInputException("the second subnet of network " + spec.name() + " must be IPv6, not "
                    + spec.subnet6());
        }
        Prefix subnet4 = spec.subnet4().network();
        Prefix subnet6 = spec.subnet6() == null ? null : spec.subnet6().network();
        InetAddress gw4 = SubnetAllocator.gateway(spec.name(), subnet4, spec.gateway4());
        InetAddress gw6 = subnet6 == null ? null : SubnetAllocator.gateway(spec.name(), subnet6, spec.gateway6());
        String bridge = spec.bridge() != null ? InterfaceNames.check(spec.bridge()) : defaultBridgeName(spec.name());
        synchronized (topology) {
            forgetNetworks();
            List<Network> existing = networks();
            for (Network n : existing) {
                if (n.name().equals(spec.name())) {
                    throw new ConflictException("network " + spec.name() + " already exists (bridge " + n.bridge() + ")");
                }
                for (Prefix p : n.subnets()) {
                    if (SubnetAllocator.overlaps(p, subnet4) || (subnet6 != null && SubnetAllocator.overlaps(p, subnet6))) {
                        throw new ConflictException("subnet " + (p.isIpv6() ? subnet6 : subnet4)
                                + " overlaps subnet " + p + " of network " + n.name());
                    }
                }
            }
            String alias = new NetworkAlias(spec.name(), subnet4, gw4, subnet6, gw6, spec.icc(), spec.internal(),
                    spec.masquerade()).encode();
            try (Rtnetlink rt = Rtnetlink.open(host)) {
                if (rt.find(bridge).isPresent()) {
                    throw new ConflictException("a link named " + bridge + " already exists; choose another bridge name");
                }
                firewall.ensure(existing);
                Rollback rollback = new Rollback();
                try {
                    rt.createBridge(bridge, spec.mac(), spec.mtu());
                    rollback.onFailure(() -> rt.delete(bridge));
                    rt.setAlias(bridge, alias);
                    // The gateway must answer neighbour discovery at once, not after a second of DAD.
                    new Sysctls(host).setDuplicateAddressDetection(bridge, false);
                    rt.addAddress(bridge, new Prefix(gw4, subnet4.length()));
                    if (gw6 != null) {
                        rt.addAddress(bridge, new Prefix(gw6, subnet6.length()));
                    }
                    rt.setUp(bridge, true);
                    Sysctls sysctls = new Sysctls(host);
                    sysctls.setIpv4Forwarding(true);
                    sysctls.setRouteLocalnet(bridge, true);
                    if (subnet6 != null) {
                        sysctls.setIpv6Forwarding(true);
                    }
                    firewall.network(bridge, subnet4, subnet6, spec.internal(), spec.masquerade(), true);
                } catch (RuntimeException e) {
                    throw rollback.undo(e);
                }
            }
            forgetNetworks();
            openForeign();
            return network(spec.name());
        }
    }

    @Override
    public void deleteNetwork(String name, boolean force) {
        synchronized (topology) {
            forgetNetworks();
            Network n = network(name);
            List<Endpoint> attached = endpoints(name);
            if (!attached.isEmpty() && !force) {
                throw new ConflictException("network " + name + " has " + attached.size()
                        + " endpoint(s) attached; detach them first, or force");
            }
            for (Endpoint e : attached) {
                detachEndpoint(e);
            }
            publisher.unpublish(n.name(), new Publisher.Selection(null, null, null,
                    m -> n.subnets().stream().anyMatch(p -> p.contains(m.containerIp()))));
            Prefix v4 = n.subnets().stream().filter(p -> !p.isIpv6()).findFirst().orElse(null);
            Prefix v6 = n.subnets().stream().filter(Prefix::isIpv6).findFirst().orElse(null);
            firewall.network(n.bridge(), v4, v6, n.internal(), n.masquerade(), false);
            try (Rtnetlink rt = Rtnetlink.open(host)) {
                rt.delete(n.bridge());
            }
            foreign().release(n.bridge());
            // With the last network gone this removes all that gatun added to other firewalls.
            openForeign();
            if (networks().isEmpty() && firewall.mappings().isEmpty()) {
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

    private void forgetNetworks() {
        cache.forget();
    }

    @Override
    public List<Network> networks() {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            List<Network> out = new ArrayList<>();
            // Networks are bridges: asking for bridges only keeps the dump short while other links churn.
            for (Link l : rt.links("bridge")) {
                readable(l, NetworkAlias::decode).ifPresent(a -> out.add(a.network(l)));
            }
            out.sort(java.util.Comparator.comparing(Network::name));
            return out;
        }
    }

    // ------------------------------------------------------------------ endpoints

    @Override
    public Endpoint attach(EndpointSpec spec) {
        boolean handOver = spec.container() == null;
        String ifname = spec.ifname() == null ? (handOver ? null : "eth0") : InterfaceNames.check(spec.ifname());
        synchronized (topology) {
            Network n = network(spec.network());
            Prefix v4 = n.subnets().getFirst();
            Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
            List<Endpoint> existing = endpoints(n.name());
            long inode = handOver ? 0 : spec.container().inode();
            Set<InetAddress> used = new HashSet<>(n.gateways());
            for (Endpoint e : existing) {
                used.add(e.ip());
                if (e.ip6() != null) {
                    used.add(e.ip6());
                }
            }
            SubnetAllocator addresses4 = new SubnetAllocator(n.name(), v4, used);
            InetAddress ip = spec.ip() != null ? addresses4.claim(spec.ip()) : addresses4.next();
            InetAddress ip6 = null;
            if (spec.ip6() != null && v6 == null) {
                throw new InvalidInputException("network " + n.name() + " has no IPv6 subnet for " + InetText.of(spec.ip6()));
            }
            if (v6 != null) {
                SubnetAllocator addresses6 = new SubnetAllocator(n.name(), v6, used);
                ip6 = spec.ip6() != null ? addresses6.claim(spec.ip6()) : addresses6.next();
            }
            String owner = checkOwner(spec.owner() == null ? InetText.of(ip) : spec.owner());
            // Derived from the address, not random: the next container given a released address
            // answers neighbours with the MAC they cached for it, so the host reaches it at once.
            MacAddress mac = spec.mac() != null ? spec.mac()
                    : ip instanceof java.net.Inet4Address v4ip ? MacAddress.fromIpv4(v4ip) : MacAddress.randomLocal();
            try (Rtnetlink rt = Rtnetlink.open(host)) {
                String hostName = freeHostName(rt, "gv");
                if (handOver) {
                    ifname = ifname == null ? freeHostName(rt, "gc") : ifname;
                    if (rt.find(ifname).isPresent()) {
                        throw new ConflictException("attach to network " + n.name() + ": interface " + ifname
                                + " already exists in the host namespace");
                    }
                }
                String namespace = handOver ? null : spec.container().name() != null ? spec.container().name()
                        : spec.container().path().toString();
                EndpointAlias alias = new EndpointAlias(n.name(), handOver ? null : inode, ifname, ip, ip6, mac, owner,
                        namespace).fitting();
                List<Prefix> addresses = new ArrayList<>();
                addresses.add(new Prefix(ip, v4.length()));
                List<InetAddress> gateways = new ArrayList<>(List.of(n.gateways().getFirst()));
                if (ip6 != null) {
                    addresses.add(new Prefix(ip6, v6.length()));
                    gateways.add(n.gateways().get(1));
                }
                ContainerInterface.create(rt, new ContainerInterface.Spec(hostName, null, n.bridge(), !n.icc(),
                        spec.container(), ifname, mac, addresses, n.internal() ? List.of() : gateways, n.mtu()));
                try {
                    rt.setAlias(hostName, alias.encode());
                } catch (RuntimeException e) {
                    rt.delete(hostName);
                    throw e;
                }
                return alias.endpoint(hostName);
            }
        }
    }

    @Override
    public void detach(String network, NetworkNamespace container, String ifname) {
        String name = InterfaceNames.check(ifname == null ? "eth0" : ifname);
        synchronized (topology) {
            network(network);
            long inode = container.inode();
            Endpoint e = endpointLinks(network).stream()
                    .filter(x -> x.alias().isIn(inode, name)).findFirst()
                    .map(EndpointLink::endpoint)
                    .orElseThrow(() -> new NotFoundException("no endpoint " + name + " of " + container.describe()
                            + " on network " + network));
            detachEndpoint(e);
        }
    }

    @Override
    public void detachOwner(String network, String owner) {
        synchronized (topology) {
            network(network);
            List<Endpoint> owned = endpoints(network).stream().filter(e -> e.owner().equals(owner)).toList();
            if (owned.isEmpty()) {
                throw new NotFoundException("no endpoint of owner " + owner + " on network " + network);
            }
            owned.forEach(this::detachEndpoint);
        }
    }

    private void detachEndpoint(Endpoint e) {
        Set<InetAddress> ips = new HashSet<>();
        ips.add(e.ip());
        if (e.ip6() != null) {
            ips.add(e.ip6());
        }
        publisher.unpublish(e.network(), new Publisher.Selection(null, null, null, m -> ips.contains(m.containerIp())));
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            if (rt.find(e.hostIfname()).isPresent()) {
                rt.delete(e.hostIfname());
            }
        }
    }

    @Override
    public List<Endpoint> endpoints(String network) {
        return endpointLinks(network).stream().map(EndpointLink::endpoint).toList();
    }

    private record EndpointLink(Link link, EndpointAlias alias) {
        Endpoint endpoint() {
            return alias.endpoint(link.name());
        }
    }

    private List<EndpointLink> endpointLinks(String network) {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            List<EndpointLink> out = new ArrayList<>();
            for (Link l : rt.links()) {
                readable(l, EndpointAlias::decode).filter(a -> network == null || network.equals(a.network()))
                        .ifPresent(a -> out.add(new EndpointLink(l, a)));
            }
            return out;
        }
    }

    @Override
    public List<String> verify(Endpoint e, NetworkNamespace container) {
        List<String> missing = new ArrayList<>();
        Network n = network(e.network());
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            Link bridge = rt.find(n.bridge()).orElse(null);
            Link hostEnd = rt.find(e.hostIfname()).orElse(null);
            if (bridge == null) {
                missing.add("bridge " + n.bridge());
            }
            if (hostEnd == null) {
                missing.add("the host end " + e.hostIfname() + " of the veth");
            } else if (bridge != null && hostEnd.master() != bridge.index()) {
                missing.add("the host end " + e.hostIfname() + " on bridge " + n.bridge());
            }
        }
        try (Rtnetlink rt = Rtnetlink.open(container)) {
            if (rt.find(e.ifname()).isEmpty()) {
                missing.add("interface " + e.ifname() + " in " + container.describe());
                return missing;
            }
            Set<InetAddress> present = new HashSet<>();
            rt.addresses(e.ifname()).forEach(a -> present.add(a.prefix().address()));
            for (InetAddress ip : e.ip6() == null ? List.of(e.ip()) : List.of(e.ip(), e.ip6())) {
                if (!present.contains(ip)) {
                    missing.add("address " + InetText.of(ip) + " on " + e.ifname() + " in " + container.describe());
                }
            }
        }
        return missing;
    }

    /**
     * A link's alias as gatun's; empty when it is not, and when it claims to be but cannot be
     * read: that link is left out of the listing with a warning, not a failed listing.
     */
    private static <T> Optional<T> readable(Link l, Function<String, Optional<T>> decode) {
        try {
            return decode.apply(l.alias());
        } catch (MalformedAliasException e) {
            System.getLogger("dev.gatun").log(System.Logger.Level.WARNING, "link {0} left out: {1}", l.name(),
                    e.getMessage());
            return Optional.empty();
        }
    }

    // ------------------------------------------------------------------ published ports

    @Override
    public List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check) {
        Network n = network(network);
        checkContainer(n, containerIp);
        String who = checkOwner(owner == null ? InetText.of(containerIp) : owner);
        if (ports.isEmpty()) {
            throw new InvalidInputException("publish to " + InetText.of(containerIp) + ": no ports given");
        }
        List<Publisher.Wanted> wanted = wanted(containerIp, ports);
        return publisher.publish(n.name(), wanted, who, check);
    }

    @Override
    public List<PortMapping> unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        Network n = network(network);
        checkContainer(n, containerIp);
        String who = checkOwner(owner == null ? InetText.of(containerIp) : owner);
        Publisher.Selection s = ports.isEmpty()
                ? new Publisher.Selection(containerIp, null, who,
                        m -> m.containerIp().equals(containerIp) && m.owner().equals(who))
                : new Publisher.Selection(containerIp, wanted(containerIp, ports), who, null);
        return publisher.unpublish(n.name(), s);
    }

    @Override
    public List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkOutside(containerIp);
        String who = checkOwner(owner == null ? InetText.of(containerIp) : owner);
        if (ports.isEmpty()) {
            throw new InvalidInputException("publish to " + InetText.of(containerIp) + ": no ports given");
        }
        List<Publisher.Wanted> wanted = wanted(containerIp, ports);
        synchronized (topology) {
            // No network of gatun's may exist yet: the table must.
            firewall.ensure(networks());
        }
        // The host's sockets are not asked: this is for a CNI chain, whose runtime holds the ports itself.
        return publisher.publish(label, wanted, who, HostPortCheck.SKIP);
    }

    @Override
    public List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkOutside(containerIp);
        String who = checkOwner(owner == null ? InetText.of(containerIp) : owner);
        Publisher.Selection s = ports.isEmpty()
                ? new Publisher.Selection(containerIp, null, who,
                        m -> m.containerIp().equals(containerIp) && m.owner().equals(who))
                : new Publisher.Selection(containerIp, wanted(containerIp, ports), who, null);
        return publisher.unpublish(label, s);
    }

    @Override
    public List<PortMapping> publishedOutside() {
        List<Prefix> subnets = networks().stream().flatMap(n -> n.subnets().stream()).toList();
        List<PortMapping> out = new ArrayList<>();
        for (PortMapping m : firewall.mappings()) {
            if (subnets.stream().noneMatch(p -> p.contains(m.containerIp()))) {
                out.add(Publisher.named(null, m));
            }
        }
        out.sort(java.util.Comparator.comparing((PortMapping m) -> m.protocol().ordinal())
                .thenComparingInt(PortMapping::hostPort));
        return out;
    }

    private void checkOutside(InetAddress ip) {
        if (ip == null) {
            throw new InvalidInputException("the container address is missing");
        }
        for (Network n : networks()) {
            if (n.subnets().stream().anyMatch(p -> p.contains(ip))) {
                throw new InvalidInputException("container address " + InetText.of(ip) + " is on network " + n.name()
                        + " of gatun's; publish there");
            }
        }
    }

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        synchronized (topology) {
            List<String> repaired = new ArrayList<>(firewall.restore(networks(), mappings));
            repaired.addAll(openForeign());
            return repaired;
        }
    }

    @Override
    public List<String> repairOwnRuleset(List<PortMapping> mappings) {
        synchronized (topology) {
            return firewall.restore(networks(), mappings);
        }
    }

    @Override
    public List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        synchronized (topology) {
            return firewall.restoreElements(networks(), mappings, sets);
        }
    }

    @Override
    public List<ForeignDrop> foreignDrops() {
        return foreign().survey(bridges());
    }

    /**
     * Opens other firewalls for the bridges of every network (none: removes what gatun added).
     * A failure does not undo the caller's work: it is logged, and the doctor reports it.
     */
    private List<String> openForeign() {
        ForeignFirewalls.Opened opened = foreign().open(bridges());
        for (String failure : opened.failures()) {
            System.getLogger("dev.gatun").log(System.Logger.Level.WARNING,
                    "other firewalls may drop traffic of gatun''s networks: {0}", failure);
        }
        return opened.changed();
    }

    private synchronized ForeignFirewalls foreign() {
        if (foreign == null) {
            foreign = firewall.foreignFirewalls();
        }
        return foreign;
    }

    private List<String> bridges() {
        return networks().stream().map(Network::bridge).toList();
    }

    @Override
    public void listen(PortListener listener) {
        publisher.listen(listener);
    }

    @Override
    public List<PortMapping> published(String network) {
        List<Network> networks = network == null ? networks() : List.of(network(network));
        List<PortMapping> out = new ArrayList<>();
        for (PortMapping m : firewall.mappings()) {
            for (Network n : networks) {
                if (n.subnets().stream().anyMatch(p -> p.contains(m.containerIp()))) {
                    out.add(Publisher.named(n.name(), m));
                }
            }
        }
        out.sort(java.util.Comparator.comparing(PortMapping::network).thenComparing(m -> m.protocol().ordinal())
                .thenComparingInt(PortMapping::hostPort));
        return out;
    }

    @Override
    public List<String> hostPortsInUse() {
        List<PortMapping> mappings = published(null);
        Map<Protocol, Set<Integer>> ports = new LinkedHashMap<>();
        for (PortMapping m : mappings) {
            if (m.protocol() != Protocol.SCTP) {
                ports.computeIfAbsent(m.protocol(), p -> new HashSet<>()).add(m.hostPort());
            }
        }
        if (ports.isEmpty()) {
            return List.of();
        }
        List<BoundSocket> held = new ArrayList<>();
        try (HostSockets sockets = HostSockets.open(host)) {
            ports.forEach((protocol, p) -> held.addAll(sockets.holding(protocol.number(), p, true)));
        }
        Map<Long, String> processes = SocketOwners.of(held.stream().map(BoundSocket::inode)
                .collect(java.util.stream.Collectors.toSet()));
        List<String> out = new ArrayList<>();
        for (PortMapping m : mappings) {
            for (BoundSocket s : held) {
                if (s.protocol() == m.protocol().number() && s.port() == m.hostPort()
                        && s.holds(m.containerIp() instanceof Inet4Address, m.hostIp())) {
                    out.add("host port " + m.describeHost() + " of network " + m.network() + " (to "
                            + InetText.of(m.containerIp()) + ":" + m.containerPort() + ", owner " + m.owner()
                            + ") is also held by " + s.describe(processes.get(s.inode()))
                            + ", which gets none of its traffic while the port is published");
                }
            }
        }
        return out;
    }

    private static List<Publisher.Wanted> wanted(InetAddress containerIp, List<PortSpec> ports) {
        boolean v4 = containerIp instanceof Inet4Address;
        List<Publisher.Wanted> out = new ArrayList<>();
        for (PortSpec p : ports) {
            if (p.hostIp() != null && (p.hostIp() instanceof Inet4Address) != v4) {
                throw new InvalidInputException("host address " + InetText.of(p.hostIp()) + " in " + p
                        + " is not of the family of container address " + InetText.of(containerIp));
            }
            // 0.0.0.0 and :: mean every address, as with Docker.
            InetAddress hostIp = p.hostIp() != null && p.hostIp().isAnyLocalAddress() ? null : p.hostIp();
            for (int[] pair : p.pairs()) {
                out.add(new Publisher.Wanted(p.protocol(), hostIp, pair[0], containerIp, pair[1]));
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ checks

    private static void checkContainer(Network n, InetAddress ip) {
        if (ip == null) {
            throw new InvalidInputException("the container address is missing");
        }
        for (Prefix p : n.subnets()) {
            if (p.contains(ip)) {
                return;
            }
        }
        throw new InvalidInputException("container address " + InetText.of(ip) + " is outside the subnets "
                + n.subnets() + " of network " + n.name());
    }

    static String checkOwner(String owner) {
        if (owner.isEmpty()) {
            throw new InvalidInputException("owner must not be empty");
        }
        for (int i = 0; i < owner.length(); i++) {
            char c = owner.charAt(i);
            if (Character.isISOControl(c) || c == '"') {
                throw new InvalidInputException("owner '" + owner.replaceAll("\\p{Cntrl}", "?")
                        + "' contains a control character or a double quote");
            }
        }
        if (owner.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_OWNER_BYTES) {
            throw new InvalidInputException("owner '" + owner + "' is longer than " + MAX_OWNER_BYTES + " bytes");
        }
        return owner;
    }

    private static void checkNetworkName(String name) {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new InvalidInputException("network name '" + name
                    + "' must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
    }

    private static String defaultBridgeName(String network) {
        String candidate = "gatun-" + network;
        if (candidate.length() <= InterfaceNames.MAX_BYTES) {
            return candidate;
        }
        return "gatun-" + Integer.toHexString(network.hashCode() & 0x7fffffff);
    }

    private static String freeHostName(Rtnetlink rt, String prefix) {
        for (int i = 0; i < 16; i++) {
            String name = prefix + String.format("%08x", ThreadLocalRandom.current().nextInt());
            if (rt.find(name).isEmpty()) {
                return name;
            }
        }
        throw new GatunException("could not find a free host interface name");
    }

    @Override
    public void close() {
        publisher.close();
        cache.close();
    }
}
