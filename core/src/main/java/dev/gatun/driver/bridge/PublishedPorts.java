package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.InetText;
import dev.gatun.Rollback;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;
import dev.gatun.sockdiag.SocketOwners;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Published ports, to containers on gatun's networks and to addresses outside them (a CNI
 * chain's): checks each request (the address, its owner, the families of the ports) and turns
 * it into the {@link Publisher}'s terms; lists the mappings per network; names host sockets
 * that share a published port.
 */
final class PublishedPorts {

    private final NetworkNamespace host;
    private final Firewall firewall;
    private final Publisher publisher;
    private final Supplier<List<Network>> networks;
    /**
     * The subnets of the bridges adopted: their entries masquerade localhost and hairpin
     * connections as a network's do, so a container there needs no {@link OutsideTarget}.
     */
    private final Supplier<List<Prefix>> adoptedSubnets;
    /** Makes gatun's table, under the driver's topology lock, for a port published while no network exists. */
    private final Runnable ensureTable;
    /**
     * {@link #complete} of the network named, under the driver's topology lock and looked up
     * again there: one removed meanwhile is not found, rather than completed after its removal.
     */
    private final Consumer<String> completeNetwork;
    /** Localhost and hairpin connections to the containers outside gatun's networks. */
    private final OutsideMasquerade outside;

    PublishedPorts(NetworkNamespace host, Firewall firewall, Publisher publisher, Supplier<List<Network>> networks,
                   Supplier<List<Prefix>> adoptedSubnets, Runnable ensureTable, Consumer<String> completeNetwork) {
        this.host = host;
        this.firewall = firewall;
        this.publisher = publisher;
        this.networks = networks;
        this.adoptedSubnets = adoptedSubnets;
        this.ensureTable = ensureTable;
        this.completeNetwork = completeNetwork;
        this.outside = new OutsideMasquerade(host, firewall);
    }

    List<PortMapping> publish(Network n, InetAddress containerIp, List<PortSpec> ports, String owner,
                              HostPortCheck check) {
        String who = checkedOwner(n, containerIp, ports, owner, "publish to ");
        List<Publisher.Wanted> wanted = wanted(containerIp, ports);
        try {
            return publisher.publish(n.name(), wanted, who, check);
        } catch (NetlinkException e) {
            completeForNoTable(n, e);
            return publisher.publish(n.name(), wanted, who, check);
        }
    }

    /**
     * Adds the network's entries, and gatun's table first if it is not there: for a network made
     * for its first container's ports ({@code createNetworkForPublish}) that did not get them.
     * Changes nothing where they are in place; nothing where the firewall makes them at creation.
     * The caller holds the driver's topology lock.
     */
    void complete(Network n) {
        if (!firewall.entriesWithMappings()) {
            return;
        }
        try {
            // Entries all in place make a transaction that changes nothing: no generation, no notification.
            firewall.network(BridgeRules.ofOwn(n), true);
        } catch (NetlinkException e) {
            if (!e.isNotFound()) {
                throw e;
            }
            ensureTable.run();
            firewall.network(BridgeRules.ofOwn(n), true);
        }
    }

    /**
     * After a publish that carries no entries of its network failed: if it found no table
     * (ENOENT: a network made for its first container's ports, on a host without gatun's table,
     * before those came), completes the network, for the caller to publish once more; else
     * throws {@code failure}. A network removed since the publish looked it up is not found.
     */
    private void completeForNoTable(Network n, NetlinkException failure) {
        if (!failure.isNotFound() || !firewall.entriesWithMappings()) {
            throw failure;
        }
        completeNetwork.accept(n.name());
    }

    /**
     * {@link #publish} to each address of {@code ports}, as one request, with the network's own
     * entries where the firewall can carry them (see {@link dev.gatun.driver.GatunDriver#publishAll}).
     */
    List<PortMapping> publishAll(Network n, Map<InetAddress, List<PortSpec>> ports, String owner, HostPortCheck check) {
        List<Publisher.Wanted> wanted = new ArrayList<>();
        String who = null;
        int addresses = 0;
        for (Map.Entry<InetAddress, List<PortSpec>> e : ports.entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            checkContainer(n, e.getKey());
            // Without an owner, the address names it, as a publish to that address alone would.
            who = who != null ? who : OwnerNames.check(PortMapping.ownerOr(owner, e.getKey()));
            wanted.addAll(wanted(e.getKey(), e.getValue()));
            addresses++;
        }
        if (wanted.isEmpty()) {
            throw new InvalidInputException("publish on network " + n.name() + ": no ports given");
        }
        if (owner == null && addresses > 1) {
            // One request has one owner: each address would name its own, and an unpublish by address find them.
            throw new InvalidInputException("publish on network " + n.name() + " to " + addresses
                    + " addresses needs an owner (without one, each address's mappings are its own: publish to each)");
        }
        if (firewall.entriesWithMappings()) {
            // The network's own entries ride along: its first container's are one transaction (see createNetworkForPublish).
            return publisher.publishWithEntries(n.name(), wanted, who, check, BridgeRules.ofOwn(n));
        }
        return publisher.publish(n.name(), wanted, who, check);
    }

    Replacement replace(Network n, InetAddress containerIp, List<PortSpec> ports, String owner, HostPortCheck check,
                        boolean keepUdpFlows) {
        String who = checkedOwner(n, containerIp, ports, owner, "replace ports of ");
        List<Publisher.Wanted> wanted = wanted(containerIp, ports);
        try {
            return publisher.replace(n.name(), wanted, who, check, keepUdpFlows);
        } catch (NetlinkException e) {
            completeForNoTable(n, e);
            return publisher.replace(n.name(), wanted, who, check, keepUdpFlows);
        }
    }

    /** The owner a publish or replace to {@code containerIp} goes under, once its target and ports are checked. */
    private String checkedOwner(Network n, InetAddress containerIp, List<PortSpec> ports, String owner,
                                String operation) {
        checkContainer(n, containerIp);
        String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
        if (ports.isEmpty()) {
            throw new InvalidInputException(operation + InetText.of(containerIp) + ": no ports given");
        }
        return who;
    }

    /** Without {@code ports}: every mapping of {@code owner} to {@code containerIp}. */
    List<PortMapping> unpublish(Network n, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkContainer(n, containerIp);
        return publisher.unpublish(n.name(), selection(containerIp, ports, owner));
    }

    List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check) {
        checkOutside(containerIp, networks.get());
        String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
        if (ports.isEmpty()) {
            throw new InvalidInputException("publish to " + InetText.of(containerIp) + ": no ports given");
        }
        List<Publisher.Wanted> wanted = wanted(containerIp, ports);
        ensureTable.run();
        Rollback rollback = new Rollback();
        addTargets(List.of(containerIp), rollback);
        try {
            return publisher.publish(label, wanted, who, check);
        } catch (RuntimeException e) {
            throw rollback.undo(e);
        }
    }

    List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkOutside(containerIp, networks.get());
        List<PortMapping> removed = publisher.unpublish(label, selection(containerIp, ports, owner));
        outside.removeIfUnused(containerIp);
        return removed;
    }

    /**
     * {@link #unpublishOutside} and {@link #publishOutside} of each address of {@code change}, all
     * checked first and then committed in one batch (see {@link Publisher#together}). The
     * {@link OutsideTarget}s they need are added before it and taken out after it where unused.
     */
    List<OutsideChange.Outcome> changeOutside(OutsideChange change) {
        String who = OwnerNames.check(change.owner());
        List<Network> own = networks.get();
        Map<InetAddress, Publisher.Selection> unpublish = new LinkedHashMap<>();
        change.unpublish().forEach((ip, ports) -> {
            checkOutside(ip, own);
            unpublish.put(ip, selection(ip, ports, who));
        });
        Map<InetAddress, List<Publisher.Wanted>> publish = new LinkedHashMap<>();
        change.publish().forEach((ip, ports) -> {
            checkOutside(ip, own);
            publish.put(ip, wanted(ip, ports));
        });
        List<PortRequest> requests = new ArrayList<>();
        unpublish.values().forEach(sel -> requests.add(Publisher.unpublishing(change.label(), sel)));
        publish.forEach((ip, wanted) -> requests.add(publisher.publishing(change.label(), wanted, who, change.check())));
        if (requests.isEmpty()) {
            return List.of();
        }
        Rollback rollback = new Rollback();
        List<PortPlanner.Answer> answers;
        if (!publish.isEmpty()) {
            ensureTable.run();
        }
        try {
            addTargets(publish.keySet(), rollback);
            answers = publisher.together(requests);
        } catch (RuntimeException e) {
            throw rollback.undo(e);
        }
        List<OutsideChange.Outcome> out = new ArrayList<>(answers.size());
        Set<InetAddress> mayBeUnused = new LinkedHashSet<>(unpublish.keySet());
        int i = 0;
        for (InetAddress ip : unpublish.keySet()) {
            PortPlanner.Answer a = answers.get(i++);
            out.add(new OutsideChange.Outcome(ip, false, a.mappings(), a.refused()));
        }
        for (InetAddress ip : publish.keySet()) {
            PortPlanner.Answer a = answers.get(i++);
            out.add(new OutsideChange.Outcome(ip, true, a.mappings(), a.refused()));
            if (a.refused() != null) {
                mayBeUnused.add(ip);
            }
        }
        mayBeUnused.forEach(outside::removeIfUnused);
        return out;
    }

    /**
     * Adds the {@link OutsideTarget} of each of {@code ips} that needs one (on no adopted
     * bridge) and has none; each added is taken out again if {@code rollback} undoes.
     */
    private void addTargets(Collection<InetAddress> ips, Rollback rollback) {
        List<Prefix> adopted = adoptedSubnets.get();
        for (InetAddress ip : ips) {
            if (adopted.stream().noneMatch(p -> p.contains(ip))) {
                outside.add(ip).ifPresent(t -> rollback.onFailure(() -> outside.removeIfUnused(ip)));
            }
        }
    }

    /**
     * Puts back the {@link OutsideTarget} of each container outside gatun's networks that a
     * mapping of {@code wanted} goes to, where someone removed it; one line for each.
     */
    List<String> restoreOutside(List<PortMapping> wanted) {
        List<Prefix> subnets = new ArrayList<>(networks.get().stream().flatMap(n -> n.subnets().stream()).toList());
        subnets.addAll(adoptedSubnets.get());
        Set<InetAddress> ips = new LinkedHashSet<>();
        for (PortMapping m : wanted) {
            if (subnets.stream().noneMatch(p -> p.contains(m.containerIp()))) {
                ips.add(m.containerIp());
            }
        }
        if (ips.isEmpty()) {
            return List.of();
        }
        return outside.addMissing(ips).stream()
                .map(t -> "the masquerade of localhost and hairpin connections to " + t.describe()).toList();
    }

    /** Removes every mapping to one of {@code addresses}, whoever owns it (an endpoint is going). */
    void unpublishAll(String network, Collection<InetAddress> addresses) {
        Set<InetAddress> ips = new HashSet<>(addresses);
        publisher.unpublish(network, new Publisher.Selection(null, null, null, m -> ips.contains(m.containerIp())));
    }

    /** Removes every mapping into {@code n}'s subnets (the network is going). */
    void unpublishAll(Network n) {
        publisher.unpublish(n.name(), new Publisher.Selection(null, null, null,
                m -> n.subnets().stream().anyMatch(p -> p.contains(m.containerIp()))));
    }

    /** The mappings into {@code of}, each named by its network, by network, protocol and host port. */
    List<PortMapping> published(List<Network> of) {
        return inNetworks(firewall.mappings(), m -> m, Publisher::named, of);
    }

    /** {@link #published} with each mapping's counts, where its network has counters. */
    List<PortTraffic> traffic(List<Network> of) {
        return inNetworks(firewall.traffic(), PortTraffic::mapping, PublishedPorts::named, of);
    }

    /** The items whose mapping goes to one of {@code of}, named by it, by network, protocol and host port. */
    private static <T> List<T> inNetworks(List<T> items, Function<T, PortMapping> mapping, BiFunction<String, T, T> named,
                                          List<Network> of) {
        List<T> out = new ArrayList<>();
        for (T item : items) {
            PortMapping m = mapping.apply(item);
            for (Network n : of) {
                if (n.subnets().stream().anyMatch(p -> p.contains(m.containerIp()))) {
                    out.add(named.apply(n.name(), item));
                }
            }
        }
        out.sort(Comparator.comparing((T t) -> mapping.apply(t).network())
                .thenComparing(t -> mapping.apply(t).protocol().ordinal())
                .thenComparingInt(t -> mapping.apply(t).hostPort()));
        return out;
    }

    /** {@link #published} of every network, then {@link #publishedOutside}: one reading of the maps and the networks. */
    List<PortMapping> all() {
        return everywhere(firewall.mappings(), m -> m, Publisher::named);
    }

    /** {@link #all} with each mapping's counts, where its network has counters: one reading too. */
    List<PortTraffic> allTraffic() {
        return everywhere(firewall.traffic(), PortTraffic::mapping, PublishedPorts::named);
    }

    /** {@code t} with its mapping named by {@code network} (null: none of gatun's). */
    private static PortTraffic named(String network, PortTraffic t) {
        return new PortTraffic(Publisher.named(network, t.mapping()), t.traffic());
    }

    /** The mappings to addresses on no network of gatun's, by protocol and host port. */
    List<PortMapping> publishedOutside() {
        return outside(firewall.mappings(), m -> m, Publisher::named, networks.get());
    }

    /** The items of every network (see {@link #inNetworks}), then those outside them (see {@link #outside}). */
    private <T> List<T> everywhere(List<T> items, Function<T, PortMapping> mapping, BiFunction<String, T, T> named) {
        List<Network> all = networks.get();
        List<T> out = inNetworks(items, mapping, named, all);
        out.addAll(outside(items, mapping, named, all));
        return out;
    }

    /** The items whose mapping goes to an address on none of {@code networks}, their network null, by protocol and host port. */
    private static <T> List<T> outside(List<T> items, Function<T, PortMapping> mapping, BiFunction<String, T, T> named,
                                       List<Network> networks) {
        List<Prefix> subnets = networks.stream().flatMap(n -> n.subnets().stream()).toList();
        List<T> out = new ArrayList<>();
        for (T item : items) {
            PortMapping m = mapping.apply(item);
            if (subnets.stream().noneMatch(p -> p.contains(m.containerIp()))) {
                out.add(named.apply(null, item));
            }
        }
        out.sort(Comparator.comparing((T t) -> mapping.apply(t).protocol().ordinal())
                .thenComparingInt(t -> mapping.apply(t).hostPort()));
        return out;
    }

    /** One line for each of {@code mappings} whose host port a socket of the host also holds, naming its process. */
    List<String> sharedWithHostSockets(List<PortMapping> mappings) {
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
        Map<Long, String> processes = SocketOwners.of(held.stream().map(BoundSocket::inode).collect(Collectors.toSet()));
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

    /** What an unpublish names: the given ports, or without any, all of the owner's to the address. */
    private static Publisher.Selection selection(InetAddress containerIp, List<PortSpec> ports, String owner) {
        String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
        return ports.isEmpty()
                ? new Publisher.Selection(containerIp, null, who,
                        m -> m.containerIp().equals(containerIp) && m.owner().equals(who))
                : new Publisher.Selection(containerIp, wanted(containerIp, ports), who, null);
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

    private static void checkOutside(InetAddress ip, List<Network> own) {
        if (ip == null) {
            throw new InvalidInputException("the container address is missing");
        }
        for (Network n : own) {
            if (n.subnets().stream().anyMatch(p -> p.contains(ip))) {
                throw new InvalidInputException("container address " + InetText.of(ip) + " is on network " + n.name()
                        + " of gatun's; publish there");
            }
        }
    }
}
