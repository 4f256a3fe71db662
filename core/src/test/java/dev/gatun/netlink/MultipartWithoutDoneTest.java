package dev.gatun.netlink;

import dev.gatun.bindings.internal.CallState;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.bindings.internal.sockaddr_nl;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A dump whose parts keep coming without NLMSG_DONE ends when the socket says so, with a typed
 * reply timeout, having decoded every part: it never waits forever. The parts come from a
 * second netlink socket of a fresh namespace (netlink delivers one socket's message to
 * another's port id), and the request is one the kernel answers with nothing at all
 * (NLMSG_NOOP without NLM_F_ACK), so no DONE of the kernel's ends the dump either.
 */
@ExtendWith(FreshNamespaces.class)
class MultipartWithoutDoneTest {

    private static final int PARTS = 5;

    @Test
    void partsWithoutDoneEndInAReplyTimeoutNotAHang(NetworkNamespace ns) throws Throwable {
        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.ROUTE, ns); Arena arena = Arena.ofConfined()) {
            socket.setReceiveTimeout(Duration.ofSeconds(1));
            int sequence = socket.reserveSequences(1) + 1; // the sequence number the dump takes next
            MemorySegment state = CallState.allocate(arena);
            int peer = ns.call(() -> {
                try (Arena inside = Arena.ofConfined()) {
                    return libc_h.socket(CallState.allocate(inside), libc_h.AF_NETLINK,
                            libc_h.SOCK_RAW | libc_h.SOCK_CLOEXEC, kernel_h.NETLINK_ROUTE);
                }
            });
            assertThat(peer).as("a second netlink socket in %s", ns.name()).isNotNegative();
            try {
                MemorySegment to = sockaddr_nl.allocate(arena);
                sockaddr_nl.nl_family(to, (short) libc_h.AF_NETLINK);
                sockaddr_nl.nl_pid(to, socket.portId());
                for (int i = 0; i < PARTS; i++) {
                    MemorySegment part = NetlinkMessages.startRequest(arena.allocate(64, 8), kernel_h.RTM_NEWLINK,
                            kernel_h.NLM_F_MULTI);
                    NetlinkMessages.append(part, 16); // an ifinfomsg, zeroed
                    nlmsghdr.nlmsg_seq(part, sequence);
                    long sent = (long) SENDTO.invokeExact(peer, part, (long) nlmsghdr.nlmsg_len(part), 0, to,
                            (int) sockaddr_nl.sizeof());
                    assertThat(sent).isEqualTo(nlmsghdr.nlmsg_len(part));
                }
            } finally {
                libc_h.close(state, peer);
            }
            MemorySegment request = NetlinkMessages.startRequest(arena.allocate(64, 8), kernel_h.NLMSG_NOOP,
                    kernel_h.NLM_F_DUMP);
            List<Integer> decoded = new ArrayList<>();

            assertThatThrownBy(() -> socket.dump(request, NetlinkMessages.HEADER_BYTES, "list what never ends",
                    m -> decoded.add(NetlinkMessages.type(m)))).isInstanceOf(ReplyTimeoutException.class)
                    .hasMessageContaining("list what never ends");
            assertThat(decoded).hasSize(PARTS).containsOnly(kernel_h.RTM_NEWLINK);
        }
    }

    /** sendto(2): libc's, which the bindings need nowhere else. */
    private static final MethodHandle SENDTO = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("sendto").orElseThrow(),
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
}
