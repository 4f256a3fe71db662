package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.inet_diag_msg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.testing.ReplyFuzz;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.List;
import java.util.stream.Stream;

/**
 * The sock_diag decoder fed the replies of sock-diag-captures/ (real SOCK_DIAG_BY_FAMILY
 * answers), mutated (ReplyFuzz): a socket, or gatun's own exception.
 */
class SockDiagReplyFuzzPropertiesTest {

    private static List<byte[]> sockets() {
        return Stream.of("tcp4-listen", "tcp6-listen", "udp6").flatMap(c -> ReplyFuzz.messages(
                "/sock-diag-captures/" + c + ".capture", t -> t == kernel_h.SOCK_DIAG_BY_FAMILY).stream()).toList();
    }

    @Provide
    Arbitrary<byte[]> mutatedSockets() {
        return ReplyFuzz.mutated(sockets(), NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) inet_diag_msg.sizeof()));
    }

    @Property(tries = 1000)
    void sockets(@ForAll("mutatedSockets") byte[] message) {
        ReplyFuzz.decodes(message, m -> HostSockets.decode(m, 6));
    }
}
