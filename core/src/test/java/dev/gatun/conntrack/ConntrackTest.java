package dev.gatun.conntrack;

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
        List<String> command = new ArrayList<>(List.of("conntrack", "-I", "-p", "tcp", "-s", "10.0.0.1",
                "-d", HOST.getHostAddress(), "--sport", Integer.toString(sourcePort), "--dport", Integer.toString(port),
                "--state", "ESTABLISHED", "-t", "300", "-u", "SEEN_REPLY"));
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
