package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.NotFoundException;
import dev.gatun.Rollback;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Networks as bridges: makes one (its bridge with the MAC it keeps, gateway addresses,
 * sysctls, its entries in the firewall; undone step by step when one fails), removes one, and
 * lists them from the bridges' aliases. The caller holds the driver's topology lock.
 */
final class BridgeNetworks {

    private final NetworkNamespace host;
    private final Firewall firewall;

    BridgeNetworks(NetworkNamespace host, Firewall firewall) {
        this.host = host;
        this.firewall = firewall;
    }

    /**
     * Checks {@code spec} against itself and the networks there are, then makes it; without
     * {@code entries}, all but its entries in the firewall, which its first publish adds.
     */
    void create(NetworkSpec spec, boolean entries) {
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
        String bridge = spec.bridge() != null ? InterfaceNames.check(spec.bridge()) : NetworkSpec.defaultBridge(spec.name());
        List<Network> existing = list();
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
        if (spec.counters() && !firewall.countsPorts()) {
            throw new InvalidInputException("network " + spec.name() + ": per-port counters need the nftables driver, not "
                    + firewall.name());
        }
        String alias = new NetworkAlias(spec.name(), subnet4, gw4, subnet6, gw6, spec.icc(), spec.internal(),
                spec.masquerade(), spec.counters()).encode();
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            if (rt.find(bridge).isPresent()) {
                throw new ConflictException("a link named " + bridge + " already exists; choose another bridge name");
            }
            if (entries) {
                firewall.ensure(withAdopted());
            } else {
                // gatun's table, if not there yet, comes with the entries and the first ports.
                firewall.ensureExisting(withAdopted());
            }
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
                if (entries) {
                    firewall.network(BridgeRules.of(bridge, subnet4, subnet6, spec), true);
                }
            } catch (RuntimeException e) {
                throw rollback.undo(e);
            }
        }
    }

    /** Takes the network's entries out of the firewall and deletes its bridge. */
    void remove(Network n) {
        firewall.network(BridgeRules.ofOwn(n), false);
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.delete(n.bridge());
        }
    }

    /** Every network, by name, read from the kernel. */
    List<Network> list() {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            List<Network> out = new ArrayList<>();
            // Networks are bridges: asking for bridges only keeps the dump short while other links churn.
            for (Link l : rt.links("bridge")) {
                AliasFields.readable(l, NetworkAlias::decode).ifPresent(a -> out.add(a.network(l)));
            }
            out.sort(Comparator.comparing(Network::name));
            return out;
        }
    }

    /**
     * Adopts another program's bridge: its alias says so, and its entries go into the firewall as
     * a network's, and its route_localnet is turned on. Adopting it again with other values
     * replaces them; the same values change nothing but a route_localnet turned off since.
     * Refused for a link that is not a bridge, one of gatun's networks, or one whose alias
     * another program wrote, and for a subnet that overlaps one of gatun's networks.
     */
    void adopt(AdoptedBridge b) {
        InterfaceNames.check(b.bridge());
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            Link link = rt.find(b.bridge()).orElseThrow(() -> new NotFoundException("cannot adopt bridge " + b.bridge()
                    + " for " + b.name() + ": no such link"));
            if (!"bridge".equals(link.kind())) {
                throw new InvalidInputException("cannot adopt " + b.bridge() + " for " + b.name() + ": it is a "
                        + (link.kind() == null ? "link of no kind" : link.kind() + " link") + ", not a bridge");
            }
            Optional<AdoptedAlias> before = AliasFields.readable(link, a -> AdoptedAlias.decode(link.name(), a));
            if (before.isEmpty() && link.alias() != null && !link.alias().isEmpty()) {
                throw new ConflictException("cannot adopt bridge " + b.bridge() + " for " + b.name() + ": its alias '"
                        + link.alias() + "' is another program's" + (link.alias().startsWith(NetworkAlias.KIND + " ")
                        ? " (it is a network of gatun's)" : ""));
            }
            Sysctls sysctls = new Sysctls(host);
            // 127.0.0.1 to a published port is routed out of the bridge, as for gatun's own
            // networks; turned off again at release only if it was gatun that turned it on.
            boolean localnetOff = "0".equals(sysctls.read("ipv4/conf/" + b.bridge() + "/route_localnet"));
            if (before.isPresent() && before.get().bridge().equals(b) && !localnetOff) {
                return;
            }
            boolean localnetByGatun = localnetOff || before.map(AdoptedAlias::localnetByGatun).orElse(false);
            List<Network> own = list();
            for (Network n : own) {
                for (Prefix p : n.subnets()) {
                    if (SubnetAllocator.overlaps(p, b.subnet4()) || (b.subnet6() != null && SubnetAllocator.overlaps(p, b.subnet6()))) {
                        throw new ConflictException("cannot adopt bridge " + b.bridge() + " for " + b.name() + ": subnet "
                                + p + " of network " + n.name() + " overlaps it");
                    }
                }
            }
            String alias = new AdoptedAlias(b, localnetByGatun).encode();
            firewall.ensure(withAdopted());
            Rollback rollback = new Rollback();
            try {
                boolean sameEntries = before.isPresent() && before.get().bridge().equals(b);
                if (before.isPresent() && !sameEntries) {
                    entries(before.get().bridge(), false);
                    rollback.onFailure(() -> entries(before.get().bridge(), true));
                }
                rt.setAlias(b.bridge(), alias);
                rollback.onFailure(() -> rt.setAlias(b.bridge(), link.alias() == null ? "" : link.alias()));
                if (localnetOff) {
                    sysctls.setRouteLocalnet(b.bridge(), true);
                    rollback.onFailure(() -> sysctls.setRouteLocalnet(b.bridge(), false));
                }
                sysctls.setIpv4Forwarding(true);
                if (b.subnet6() != null) {
                    sysctls.setIpv6Forwarding(true);
                }
                if (!sameEntries) {
                    entries(b, true);
                }
            } catch (RuntimeException e) {
                throw rollback.undo(e);
            }
        }
    }

    /**
     * Lets go of an adopted bridge: its entries leave the firewall, its alias is cleared and its
     * route_localnet is as gatun found it; the bridge stays. A bridge gone already (its program
     * deleted it) leaves only its entries to take out.
     */
    void release(AdoptedBridge b) {
        entries(b, false);
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            Optional<Link> link = rt.find(b.bridge());
            Optional<AdoptedAlias> alias = link.flatMap(l -> AliasFields.readable(l, a -> AdoptedAlias.decode(b.bridge(), a)));
            if (alias.isPresent()) {
                rt.setAlias(b.bridge(), "");
                if (alias.get().localnetByGatun()) {
                    new Sysctls(host).setRouteLocalnet(b.bridge(), false);
                }
            }
        }
    }

    private void entries(AdoptedBridge b, boolean add) {
        firewall.network(BridgeRules.of(b), add);
    }

    /** Every adopted bridge, read from the bridges' aliases. */
    List<AdoptedBridge> adopted() {
        return adoptedAliases().stream().map(AdoptedAlias::bridge).toList();
    }

    /** Every adopted bridge's alias (the bridge, and whether gatun turned its route_localnet on), by bridge name. */
    List<AdoptedAlias> adoptedAliases() {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            List<AdoptedAlias> out = new ArrayList<>();
            for (Link l : rt.links("bridge")) {
                AliasFields.readable(l, a -> AdoptedAlias.decode(l.name(), a)).ifPresent(out::add);
            }
            out.sort(Comparator.comparing(a -> a.bridge().bridge()));
            return out;
        }
    }

    /** The subnets of every adopted bridge, read from the bridges' aliases. */
    List<Prefix> adoptedSubnets() {
        List<Prefix> out = new ArrayList<>();
        for (AdoptedBridge b : adopted()) {
            out.add(b.subnet4());
            if (b.subnet6() != null) {
                out.add(b.subnet6());
            }
        }
        return out;
    }

    /** The adopted bridges as networks of the packet filter, with gatun's own: what its entries must be. */
    List<Network> withAdopted() {
        List<Network> out = new ArrayList<>();
        // As create entered them: icc, whatever the network's own (its ports are isolated instead).
        for (Network n : list()) {
            out.add(new Network(n.name(), n.bridge(), n.mac(), n.subnets(), n.gateways(), true, n.internal(), n.masquerade(),
                    n.mtu(), n.counters()));
        }
        adopted().forEach(b -> out.add(AdoptedAlias.asNetwork(b)));
        return out;
    }

    private static void checkNetworkName(String name) {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new InvalidInputException("network name '" + name
                    + "' must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit");
        }
    }

}
