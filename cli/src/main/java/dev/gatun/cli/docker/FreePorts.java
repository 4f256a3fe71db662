package dev.gatun.cli.docker;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostSurvey;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Chooses a host port for a binding that leaves it to the driver: the lowest port of a range
 * that no mapping of the same protocol holds and no socket of the host holds (sock_diag: a TCP
 * listener, a bound UDP socket; SCTP is not asked), where the range is the one asked for or,
 * without one, the host's ip_local_port_range less its ip_local_reserved_ports, as Docker's own
 * allocator does. The caller holds a lock across choosing and publishing, so two requests never
 * choose the same port.
 */
final class FreePorts {

    private final HostSurvey survey;
    /** Asked when a port is chosen, not before: a driver that is never asked to choose need not say. */
    private final Supplier<NetworkNamespace> host;

    FreePorts(HostSurvey survey, Supplier<NetworkNamespace> host) {
        this.survey = survey;
        this.host = host;
    }

    /**
     * The lowest free port of {@code from}-{@code to} ({@code from} 0: the ephemeral range);
     * {@code chosen} holds what this request already took.
     */
    int lowest(Protocol protocol, InetAddress hostIp, int from, int to, Map<InetAddress, List<PortSpec>> chosen) {
        int low = from;
        int high = to;
        Sysctls sysctls = new Sysctls(host.get());
        Set<Integer> reserved = Set.of();
        if (from == 0) {
            String[] range = sysctls.read("ipv4/ip_local_port_range").split("\\s+");
            low = Integer.parseInt(range[0]);
            high = Integer.parseInt(range[1]);
            reserved = reservedPorts(sysctls.read("ipv4/ip_local_reserved_ports"));
        }
        Set<Integer> taken = new HashSet<>();
        // Ports a CNI chain published outside gatun's networks are taken too.
        for (PortMapping m : survey.allPublished()) {
            if (m.protocol() == protocol && (hostIp == null || m.hostIp() == null || hostIp.equals(m.hostIp()))) {
                taken.add(m.hostPort());
            }
        }
        chosen.values().forEach(specs -> specs.stream().filter(s -> s.protocol() == protocol)
                .forEach(s -> taken.add(s.hostStart())));
        Set<Integer> held = heldBySockets(protocol, hostIp, low, high);
        for (int p = low; p <= high; p++) {
            if (!taken.contains(p) && !reserved.contains(p) && !held.contains(p)) {
                return p;
            }
        }
        int publishedHere = count(taken, low, high);
        int heldHere = count(held, low, high);
        int reservedHere = count(reserved, low, high);
        throw new ConflictException("no free " + protocol.keyword() + " host port left in " + low + "-" + high
                + (from == 0 ? " (net.ipv4.ip_local_port_range)" : "") + ": " + publishedHere + " published or chosen, "
                + heldHere + " held by sockets of the host" + (from == 0 ? ", " + reservedHere
                + " reserved (net.ipv4.ip_local_reserved_ports)" : ""));
    }

    /** The ports of the range that a socket of the host holds for {@code hostIp} (null: any address). */
    private Set<Integer> heldBySockets(Protocol protocol, InetAddress hostIp, int low, int high) {
        Set<Integer> held = new HashSet<>();
        if (protocol == Protocol.SCTP) {
            return held;
        }
        try (HostSockets sockets = HostSockets.open(host.get())) {
            for (BoundSocket s : sockets.holdingRange(protocol.number(), low, high)) {
                boolean holds = hostIp == null ? s.holds(true, null) || s.holds(false, null)
                        : s.holds(hostIp instanceof Inet4Address, hostIp);
                if (holds) {
                    held.add(s.port());
                }
            }
        }
        return held;
    }

    private static int count(Set<Integer> ports, int low, int high) {
        int n = 0;
        for (int p : ports) {
            if (p >= low && p <= high) {
                n++;
            }
        }
        return n;
    }

    /** The ports of net.ipv4.ip_local_reserved_ports: "" or a list such as "8080,9000-9009". */
    static Set<Integer> reservedPorts(String text) {
        Set<Integer> out = new HashSet<>();
        for (String part : text.strip().split(",")) {
            if (part.isBlank()) {
                continue;
            }
            String[] ends = part.strip().split("-");
            try {
                int first = Integer.parseInt(ends[0]);
                int last = ends.length > 1 ? Integer.parseInt(ends[1]) : first;
                for (int p = first; p <= last; p++) {
                    out.add(p);
                }
            } catch (NumberFormatException e) {
                throw new InvalidInputException("net.ipv4.ip_local_reserved_ports reads '" + text + "', not a list of ports");
            }
        }
        return out;
    }
}
