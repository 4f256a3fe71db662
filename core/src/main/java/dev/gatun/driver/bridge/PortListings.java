package dev.gatun.driver.bridge;

import dev.gatun.InetText;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;
import dev.gatun.sockdiag.SocketOwners;

import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * What is published, as the maps hold it: each mapping named by the network its container is
 * on (none for one outside gatun's networks), with its counts where asked; and the host's
 * sockets that share a published port.
 */
final class PortListings {

    private final NetworkNamespace host;
    private final Firewall firewall;
    private final Supplier<List<Network>> networks;

    PortListings(NetworkNamespace host, Firewall firewall, Supplier<List<Network>> networks) {
        this.host = host;
        this.firewall = firewall;
        this.networks = networks;
    }

    /** The mappings into {@code of}, each named by its network, by network, protocol and host port. */
    List<PortMapping> published(List<Network> of) {
        return inNetworks(firewall.mappings(), m -> m, Publisher::named, of);
    }

    /** {@link #published} with each mapping's counts, where its network has counters. */
    List<PortTraffic> traffic(List<Network> of) {
        return inNetworks(firewall.traffic(), PortTraffic::mapping, PortListings::named, of);
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
        return everywhere(firewall.traffic(), PortTraffic::mapping, PortListings::named);
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
}
