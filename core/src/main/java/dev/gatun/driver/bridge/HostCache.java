package dev.gatun.driver.bridge;

import dev.gatun.driver.Endpoint;
import dev.gatun.driver.Network;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.LinkChanges;
import dev.gatun.rtnl.Rtnetlink;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The host's networks, local addresses and endpoint addresses as publish, unpublish and replace
 * need them on every call,
 * kept until the kernel announces a change to a link or an address ({@link LinkChanges}), so a
 * warm publish asks the kernel nothing about them and a change by another process is seen at
 * the next call, not after a timeout.
 */
final class HostCache implements AutoCloseable {

    private static final long EMPTY = -1;

    private final NetworkNamespace host;
    private final Supplier<List<Network>> readNetworks;
    private final Supplier<List<Endpoint>> readEndpoints;
    private LinkChanges changes;
    private Map<String, Network> networks = Map.of();
    private CountedSubnets counted = CountedSubnets.NONE;
    private long networksVersion = EMPTY;
    private List<InetAddress> addresses = List.of();
    private long addressesVersion = EMPTY;
    /** Each network's endpoint addresses (IPv4 and IPv6), for the target check of a replace. */
    private Map<String, Set<InetAddress>> endpointAddresses = Map.of();
    private long endpointsVersion = EMPTY;
    /** The watch's version at its last look. */
    private long lastVersion = EMPTY;

    HostCache(NetworkNamespace host, Supplier<List<Network>> readNetworks, Supplier<List<Endpoint>> readEndpoints) {
        this.host = host;
        this.readNetworks = readNetworks;
        this.readEndpoints = readEndpoints;
    }

    /**
     * Whether an endpoint of {@code network} has {@code address}, as of a look for changes made
     * now: an endpoint attached or removed by anyone before the call is seen, and a warm call
     * asks the kernel nothing (the endpoints are read again only after a link changed).
     */
    synchronized boolean hasEndpoint(String network, InetAddress address) {
        long now = version();
        if (endpointsVersion != now) {
            Map<String, Set<InetAddress>> read = new HashMap<>();
            for (Endpoint e : readEndpoints.get()) {
                Set<InetAddress> of = read.computeIfAbsent(e.network(), k -> new HashSet<>());
                of.add(e.ip());
                if (e.ip6() != null) {
                    of.add(e.ip6());
                }
            }
            endpointAddresses = read;
            endpointsVersion = now;
        }
        return endpointAddresses.getOrDefault(network, Set.of()).contains(address);
    }

    /** The network of this name, or null if there is none. */
    synchronized Network network(String name) {
        refreshNetworks();
        return networks.get(name);
    }

    /**
     * Which mappings count their traffic, by the networks as of the last look for changes (a
     * commit follows its requests' network lookups, which looked).
     */
    synchronized CountedSubnets counted() {
        refreshNetworks(changes != null ? lastVersion : version());
        return counted;
    }

    private void refreshNetworks() {
        refreshNetworks(version());
    }

    private void refreshNetworks(long now) {
        if (networksVersion != now) {
            Map<String, Network> read = new HashMap<>();
            readNetworks.get().forEach(n -> read.put(n.name(), n));
            networks = read;
            counted = CountedSubnets.of(read.values());
            networksVersion = now;
        }
    }

    /**
     * Every address of the host namespace, on any link, as of the last look for changes (made
     * by each {@link #network} lookup): a publish or unpublish looks up its network first, so
     * a change made before the call started has been seen, without a second look per call.
     */
    synchronized List<InetAddress> localAddresses() {
        long now = changes != null ? lastVersion : version();
        if (addressesVersion != now) {
            try (Rtnetlink rt = Rtnetlink.open(host)) {
                addresses = rt.addresses(null).stream().map(a -> a.prefix().address()).toList();
            }
            addressesVersion = now;
        }
        return addresses;
    }

    /** Forgets everything, for this driver's own changes (their announcements would do it too, a little later). */
    synchronized void forget() {
        networksVersion = EMPTY;
        addressesVersion = EMPTY;
        endpointsVersion = EMPTY;
    }

    /** The watch's version, the watch started at the first read. */
    private long version() {
        if (changes == null) {
            changes = LinkChanges.watch(host);
        }
        lastVersion = changes.version();
        return lastVersion;
    }

    @Override
    public synchronized void close() {
        if (changes != null) {
            changes.close();
            changes = null;
        }
        forget();
    }
}
