package dev.gatun.conntrack;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conntrack's readings against the kernel's own table, filled by the `conntrack` tool: an
 * entry of the host's own (not NATed) beside connections NATed to containers.
 */
@ExtendWith(FreshNamespaces.class)
class ConntrackTest {

    private static final InetAddress HOST = InetAddress.ofLiteral("10.0.0.2");
    private static final InetAddress CONTAINER = InetAddress.ofLiteral("10.9.0.5");

    /** A connection from 10.0.0.1 to 10.0.0.2:{@code port}, destination-NATed to {@code target} unless it is null. */
    private static void establish(NetworkNamespace ns, int sourcePort, int port, InetAddress target) {
        track(ns, List.of("-p", "tcp", "--state", "ESTABLISHED"), sourcePort, port, target);
    }

    /** A UDP flow from 10.0.0.1 to 10.0.0.2:{@code port}, destination-NATed to {@code target} unless it is null. */
    private static void flow(NetworkNamespace ns, int sourcePort, int port, InetAddress target) {
        track(ns, List.of("-p", "udp"), sourcePort, port, target);
    }

    private static void track(NetworkNamespace ns, List<String> protocol, int sourcePort, int port, InetAddress target) {
        track(ns, protocol, sourcePort, HOST, port, target, true);
    }

    /** A UDP flow to {@code destination}:{@code port} that never had a reply, untranslated: a client that found nothing there. */
    private static void unanswered(NetworkNamespace ns, int sourcePort, InetAddress destination, int port) {
        track(ns, List.of("-p", "udp"), sourcePort, destination, port, null, false);
    }

    private static void track(NetworkNamespace ns, List<String> protocol, int sourcePort, InetAddress destination, int port,
                              InetAddress target, boolean answered) {
        List<String> command = new ArrayList<>(List.of("conntrack", "-I"));
        command.addAll(protocol);
        command.addAll(List.of("-s", "10.0.0.1", "-d", destination.getHostAddress(), "--sport", Integer.toString(sourcePort),
                "--dport", Integer.toString(port), "-t", "300"));
        if (answered) {
            command.addAll(List.of("-u", "SEEN_REPLY"));
        }
        if (target != null) {
            command.addAll(List.of("--dst-nat", target.getHostAddress()));
        }
        Oracle.in(ns, command.toArray(String[]::new));
    }

    @Test
    void theKernelSendsOnlyTheNatedEntriesADrainAsksAbout(NetworkNamespace ns) {
        establish(ns, 1000, 22, null);
        establish(ns, 1001, 8080, CONTAINER);
        assertThat(Oracle.in(ns, "conntrack", "-L")).contains("sport=1000").contains("sport=1001");

        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.NETFILTER, ns); Arena arena = Arena.ofConfined()) {
            MemorySegment request = Conntrack.nattedDump(arena, libc_h.AF_INET);
            List<Integer> sent = socket.dump(request, nlmsghdr.nlmsg_len(request), "list conntrack entries",
                    m -> Conntrack.establishedNatted(m) == null ? 0 : 1);
            // Filtered in the kernel: the host's own connection is not sent at all.
            assertThat(sent).containsExactly(1);
        }
    }

    /** An unpublish's flush of UDP flows: the NATed flows to the port go, the host's own flow to it stays. */
    @Test
    void deletingNatedFlowsLeavesTheHostsOwn(NetworkNamespace ns) {
        flow(ns, 1000, 5353, null);
        flow(ns, 1001, 5353, CONTAINER);
        flow(ns, 1002, 5354, CONTAINER);

        try (Conntrack conntrack = Conntrack.open(ns)) {
            int deleted = conntrack.deleteNatted(List.of(new Conntrack.NattedPort(false, libc_h.IPPROTO_UDP, null, 5353)));
            assertThat(deleted).isEqualTo(1);
        }
        String left = Oracle.in(ns, "conntrack", "-L", "-p", "udp");
        assertThat(left).contains("sport=1000").contains("sport=1002").doesNotContain("sport=1001");
    }

    /**
     * A publish's deletion of the flows that began before it: untranslated flows to the port on
     * a host address go; one NATed elsewhere (kept or flushed by its own rules), one to another
     * port and one to an address that is not the host's stay. The kernel sends only the entries
     * of the port, untranslated.
     */
    @Test
    void deletingUntranslatedFlowsTakesOnlyThoseToThePortOnAHostAddress(NetworkNamespace ns) {
        InetAddress elsewhere = InetAddress.ofLiteral("10.0.0.99");
        unanswered(ns, 1000, HOST, 5353);
        flow(ns, 1001, 5353, CONTAINER);
        unanswered(ns, 1002, HOST, 5354);
        unanswered(ns, 1003, elsewhere, 5353);

        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.NETFILTER, ns); Arena arena = Arena.ofConfined()) {
            MemorySegment request = Conntrack.untranslatedDump(arena, libc_h.AF_INET, libc_h.IPPROTO_UDP, null, 5353,
                    kernel_h.IPS_DST_NAT);
            List<Integer> sent = socket.dump(request, nlmsghdr.nlmsg_len(request), "list conntrack entries", m -> 1);
            assertThat(sent).as("filtered in the kernel: the port's untranslated entries alone").hasSize(2);
        }
        try (Conntrack conntrack = Conntrack.open(ns)) {
            int deleted = conntrack.deleteUntranslated(
                    List.of(new Conntrack.NattedPort(false, libc_h.IPPROTO_UDP, null, 5353)),
                    address -> Arrays.equals(address, HOST.getAddress()));
            assertThat(deleted).isEqualTo(1);
        }
        String left = Oracle.in(ns, "conntrack", "-L", "-p", "udp");
        assertThat(left).doesNotContain("sport=1000 ").contains("sport=1001 ").contains("sport=1002 ").contains("sport=1003 ");
    }

    /** More ports than are filtered one by one share one dump, matched here: the same outcome. */
    @Test
    void manyPortsShareOneDump(NetworkNamespace ns) {
        List<Conntrack.NattedPort> ports = new ArrayList<>();
        for (int i = 0; i <= Conntrack.FILTERED_DUMPS; i++) {
            unanswered(ns, 2000 + i, HOST, 6000 + i);
            ports.add(new Conntrack.NattedPort(false, libc_h.IPPROTO_UDP, HOST, 6000 + i));
        }
        unanswered(ns, 3000, HOST, 7000);

        try (Conntrack conntrack = Conntrack.open(ns)) {
            assertThat(conntrack.deleteUntranslated(ports, address -> false)).isEqualTo(ports.size());
        }
        assertThat(Oracle.in(ns, "conntrack", "-L", "-p", "udp")).doesNotContain("dport=60").contains("dport=7000 ");
    }

    /** What fills udpheard when gatun's table is made: the ports of unanswered, untranslated UDP alone. */
    @Test
    void theUnansweredUdpPortsAreThoseOfUntranslatedFlowsWithoutAReply(NetworkNamespace ns) {
        unanswered(ns, 1000, HOST, 5353);
        flow(ns, 1001, 53, null);
        flow(ns, 1002, 8080, CONTAINER);
        establish(ns, 1003, 22, null);

        try (Conntrack conntrack = Conntrack.open(ns)) {
            assertThat(conntrack.untranslatedPorts(libc_h.IPPROTO_UDP)).containsExactly(5353);
        }
    }

    @Test
    void aDrainsReadingFindsEachNatedConnectionWithWhereItWasSent(NetworkNamespace ns) {
        establish(ns, 1000, 8080, null);
        establish(ns, 1001, 8080, CONTAINER);
        establish(ns, 1002, 8080, CONTAINER);

        try (Conntrack conntrack = Conntrack.open(ns)) {
            List<Conntrack.NattedFlow> flows = conntrack.establishedNatted(false);

            assertThat(flows).hasSize(2).allSatisfy(f -> {
                assertThat(f.port()).isEqualTo(8080);
                assertThat(f.destination()).isEqualTo(HOST.getAddress());
                assertThat(f.target()).isEqualTo(CONTAINER.getAddress());
            });
            assertThat(conntrack.establishedNatted(true)).isEmpty();
        }
    }
}
