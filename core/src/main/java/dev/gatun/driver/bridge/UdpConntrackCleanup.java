package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * After a commit, the UDP conntrack entries that would keep a client away from where its
 * mappings now send it. A UDP client keeps its source port, so each datagram refreshes the entry
 * its first one made:
 * <ul>
 * <li>mappings moved or removed: their entries, translated to the old container, go (walking the
 * host's conntrack table: milliseconds, so once per commit);
 * <li>mappings added: the entries of their host address and port that no dnat translated (a
 * client that began before the publish, while its datagrams went to the host itself) go, so that
 * the next datagram is translated. Only for ports {@code heard} says such datagrams came to
 * lately, so that a publish walks the table only when a client may be waiting.
 * </ul>
 * TCP is left alone: a new connection gets a new entry anyway (Docker also clears UDP only).
 */
final class UdpConntrackCleanup {

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    private final Conntrack conntrack;
    private final Function<Collection<Integer>, Set<Integer>> heard;
    private final Supplier<List<InetAddress>> localAddresses;
    private final String hostName;

    /**
     * {@code heard}: of some UDP ports, those untranslated datagrams came to lately (see
     * {@link MappingStore#udpPortsHeard}); {@code localAddresses}: the host's addresses, the
     * destinations a mapping of every address translates.
     */
    UdpConntrackCleanup(Conntrack conntrack, Function<Collection<Integer>, Set<Integer>> heard,
                        Supplier<List<InetAddress>> localAddresses, String hostName) {
        this.conntrack = conntrack;
        this.heard = heard;
        this.localAddresses = localAddresses;
        this.hostName = hostName;
    }

    /** After a commit that moved or removed {@code flushed} and added {@code added}. */
    void after(List<PortMapping> flushed, Collection<PortMapping> added) {
        List<Conntrack.NattedPort> gone = udpPorts(flushed);
        List<Conntrack.NattedPort> published = udpPorts(added);
        if (gone.isEmpty() && published.isEmpty()) {
            return;
        }
        try {
            if (!gone.isEmpty()) {
                conntrack.deleteNatted(gone);
            }
            if (!published.isEmpty()) {
                untranslated(waiting(published));
            }
        } catch (RuntimeException e) {
            // The maps changed: the callers get their results, not an error that would make
            // them think nothing did (and retry into "already published").
            LOG.log(System.Logger.Level.WARNING, "ports changed in " + hostName + ", but the conntrack entries of "
                    + "their UDP clients could not be deleted (" + e.getMessage() + "): a UDP client may reach the "
                    + "old target until its entry expires");
        }
    }

    /** After a repair put {@code restored} back: their clients sent while they were gone, and nothing recorded it. */
    void afterRepair(Collection<PortMapping> restored) {
        try {
            untranslated(udpPorts(restored));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "ports were put back in " + hostName + ", but the conntrack entries "
                    + "of UDP clients that sent while they were gone could not be deleted (" + e.getMessage() + ")");
        }
    }

    /** Of {@code published}, those on a port that {@code heard} says untranslated UDP went to (loops: the publish path). */
    private List<Conntrack.NattedPort> waiting(List<Conntrack.NattedPort> published) {
        List<Integer> ports = new ArrayList<>(published.size());
        for (Conntrack.NattedPort p : published) {
            ports.add(p.port());
        }
        Set<Integer> heardOf = heard.apply(ports);
        if (heardOf.isEmpty()) {
            return List.of();
        }
        List<Conntrack.NattedPort> out = new ArrayList<>();
        for (Conntrack.NattedPort p : published) {
            if (heardOf.contains(p.port())) {
                out.add(p);
            }
        }
        return out;
    }

    private void untranslated(List<Conntrack.NattedPort> ports) {
        if (ports.isEmpty()) {
            return;
        }
        boolean anyWildcard = ports.stream().anyMatch(p -> p.address() == null);
        List<byte[]> local = anyWildcard ? localAddresses.get().stream().map(InetAddress::getAddress).toList() : List.of();
        conntrack.deleteUntranslated(ports, a -> local.stream().anyMatch(l -> Arrays.equals(l, a)));
    }

    private static List<Conntrack.NattedPort> udpPorts(Collection<PortMapping> mappings) {
        List<Conntrack.NattedPort> out = new ArrayList<>();
        for (PortMapping m : mappings) {
            if (m.protocol() == Protocol.UDP) {
                out.add(new Conntrack.NattedPort(!(m.containerIp() instanceof Inet4Address), m.protocol().number(),
                        m.hostIp(), m.hostPort()));
            }
        }
        return out;
    }
}
