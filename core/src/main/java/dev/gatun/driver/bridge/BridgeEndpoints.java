package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.InetText;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.ContainerInterface;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Endpoints as veth pairs whose host end is a port of the network's bridge: attaches one
 * (addresses from the {@link SubnetAllocator}, the MAC from the address, the alias on the host
 * end), finds, lists, removes and verifies them. The caller holds the driver's topology lock
 * and removes an endpoint's mappings itself.
 */
final class BridgeEndpoints {

    private final NetworkNamespace host;

    BridgeEndpoints(NetworkNamespace host) {
        this.host = host;
    }

    /**
     * The interface name {@code spec} asks for, checked: eth0 in a container unless it names
     * one; null for an interface handed over without a name (one is chosen then).
     */
    static String ifname(EndpointSpec spec) {
        return spec.ifname() == null ? (spec.container() == null ? null : "eth0") : InterfaceNames.check(spec.ifname());
    }

    /**
     * Attaches a container (or, without one, an interface left in the host for the caller) to
     * {@code n}, as {@code ifname}, from {@link #ifname}.
     */
    Endpoint attach(Network n, EndpointSpec spec, String ifname) {
        boolean handOver = spec.container() == null;
        Prefix v4 = n.subnets().getFirst();
        Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
        Set<InetAddress> used = new HashSet<>(n.gateways());
        for (Endpoint e : list(n.name())) {
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
        String owner = OwnerNames.check(PortMapping.ownerOr(spec.owner(), ip));
        // Derived from the address, not random: the next container given a released address
        // answers neighbours with the MAC they cached for it, so the host reaches it at once.
        MacAddress mac = spec.mac() != null ? spec.mac()
                : ip instanceof Inet4Address v4ip ? MacAddress.fromIpv4(v4ip) : MacAddress.randomLocal();
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            String hostName = freeHostName(rt, "gv");
            if (handOver) {
                ifname = ifname == null ? freeHostName(rt, "gc") : ifname;
                if (rt.find(ifname).isPresent()) {
                    throw new ConflictException("attach to network " + n.name() + ": interface " + ifname
                            + " already exists in the host namespace");
                }
            }
            if (!handOver) {
                // Asked first, so that the answer is a conflict that names it, not the kernel's EEXIST.
                try (Rtnetlink inside = Rtnetlink.open(spec.container())) {
                    if (inside.find(ifname).isPresent()) {
                        throw new ConflictException("attach to network " + n.name() + ": interface " + ifname
                                + " already exists in " + spec.container().describe()
                                + "; give the endpoint another interface name");
                    }
                }
            }
            String namespace = handOver ? null : spec.container().name() != null ? spec.container().name()
                    : spec.container().path().toString();
            EndpointAlias alias = new EndpointAlias(n.name(), handOver ? null : spec.container().inode(), ifname, ip, ip6,
                    mac, owner, namespace).fitting();
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

    /** The endpoint {@code ifname} of {@code container} on {@code network}, if there is one. */
    Optional<Endpoint> find(String network, NetworkNamespace container, String ifname) {
        long inode = container.inode();
        return links(network).stream().filter(x -> x.alias().isIn(inode, ifname)).findFirst()
                .map(EndpointLink::endpoint);
    }

    /** The endpoints of {@code network}, or of every network when it is null. */
    List<Endpoint> list(String network) {
        return links(network).stream().map(EndpointLink::endpoint).toList();
    }

    /** Deletes the veth pair, if it is still there (deleting one end deletes both). */
    void remove(Endpoint e) {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            if (rt.find(e.hostIfname()).isPresent()) {
                rt.delete(e.hostIfname());
            }
        }
    }

    /** What of {@code e} is missing on its network {@code n} and in {@code container}; empty when all is there. */
    List<String> verify(Network n, Endpoint e, NetworkNamespace container) {
        List<String> missing = new ArrayList<>();
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

    private record EndpointLink(Link link, EndpointAlias alias) {
        Endpoint endpoint() {
            return alias.endpoint(link.name());
        }
    }

    private List<EndpointLink> links(String network) {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            List<EndpointLink> out = new ArrayList<>();
            for (Link l : rt.links()) {
                AliasFields.readable(l, EndpointAlias::decode).filter(a -> network == null || network.equals(a.network()))
                        .ifPresent(a -> out.add(new EndpointLink(l, a)));
            }
            return out;
        }
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
}
