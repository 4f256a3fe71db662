package dev.gatun.driver.bridge;

import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Asks the host's sockets (sock_diag) which of the ports a batch's checking publishes want they
 * hold, once per batch, in one datagram per protocol: for a port on one address, the socket the
 * kernel would hand a packet to that address and port; for a port on every address, the one for
 * the wildcard and for each local address of the family (an IPv6 wildcard socket without
 * IPV6_V6ONLY is found for IPv4 too). SCTP is not asked. {@link PortPlanner} refuses what they hold.
 */
final class HostSocketQuestion implements CommitLoop.HeldSockets, AutoCloseable {

    /**
     * Up to this many addresses and ports of a protocol are looked up one by one, as the kernel
     * would for a packet; more (a bulk publish) are answered from one dump of the protocol's
     * sockets on their ports, both families: 200,000 lookups took a 100,000-port publish longer
     * than its commit. A dump also lists sockets bound to a device, which lookups miss, so it
     * refuses a little more, never less.
     */
    private static final int SOCKET_LOOKUPS_BEFORE_DUMP = 1024;

    private static final InetAddress WILDCARD4 = InetAddress.ofLiteral("0.0.0.0");
    private static final InetAddress WILDCARD6 = InetAddress.ofLiteral("::");

    private final NetworkNamespace host;
    /** Opened at the first batch that asks, or by {@link #open}. */
    private HostSockets sockets;

    HostSocketQuestion(NetworkNamespace host) {
        this.host = host;
    }

    /** Opens the socket now rather than at the first batch that asks (a long-running driver's first request). */
    void open() {
        if (sockets == null) {
            sockets = HostSockets.open(host);
        }
    }

    @Override
    public List<BoundSocket> of(List<CommitRequest> batch, List<InetAddress> localAddresses) {
        Asked tcp = new Asked();
        Asked udp = new Asked();
        for (CommitRequest r : batch) {
            if (r instanceof CommitRequest.Publish p && p.checkHost()) {
                for (Publisher.Wanted w : p.mappings()) {
                    Asked to = w.protocol() == Protocol.TCP ? tcp : w.protocol() == Protocol.UDP ? udp : null;
                    if (to == null) {
                        continue;
                    }
                    if (w.hostIp() != null) {
                        to.add(w.hostIp(), w.hostPort());
                        continue;
                    }
                    boolean v4 = w.containerIp() instanceof Inet4Address;
                    to.add(v4 ? WILDCARD4 : WILDCARD6, w.hostPort());
                    // By index: an iterator for each mapping would be 100,000 more objects in a bulk publish.
                    for (int i = 0; i < localAddresses.size(); i++) {
                        InetAddress a = localAddresses.get(i);
                        if ((a instanceof Inet4Address) == v4) {
                            to.add(a, w.hostPort());
                        }
                    }
                }
            }
        }
        if (tcp.isEmpty() && udp.isEmpty()) {
            return List.of();
        }
        open();
        List<BoundSocket> held = new ArrayList<>(ask(Protocol.TCP, tcp));
        held.addAll(ask(Protocol.UDP, udp));
        return held;
    }

    /**
     * The addresses and ports asked of one protocol: each pair while they are few enough to look
     * up one by one, and the ports alone (for a dump) once they are more.
     */
    private static final class Asked {
        private Set<InetSocketAddress> locals = new LinkedHashSet<>();
        /** Made only when the pairs become too many: 8 KiB a publish of one port would allocate for nothing. */
        private BitSet ports;

        void add(InetAddress address, int port) {
            if (ports != null) {
                ports.set(port);
            } else if (locals.add(new InetSocketAddress(address, port)) && locals.size() > SOCKET_LOOKUPS_BEFORE_DUMP) {
                ports = new BitSet(65536);
                locals.forEach(l -> ports.set(l.getPort()));
                locals = null;
            }
        }

        boolean isEmpty() {
            return ports == null ? locals.isEmpty() : ports.isEmpty();
        }
    }

    private List<BoundSocket> ask(Protocol protocol, Asked asked) {
        if (asked.isEmpty()) {
            return List.of();
        }
        if (asked.locals != null) {
            // Always an ArrayList: List.copyOf makes one class for one or two and another for more, and
            // code compiled for the sizes a serve's warm-up asked trapped at a host's first other one.
            return sockets.receiving(protocol.number(), new ArrayList<>(asked.locals));
        }
        List<BoundSocket> out = new ArrayList<>();
        for (BoundSocket s : sockets.holdingRange(protocol.number(), asked.ports.nextSetBit(0), asked.ports.length() - 1)) {
            if (asked.ports.get(s.port())) {
                out.add(s);
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (sockets != null) {
            sockets.close();
            sockets = null;
        }
    }
}
