package dev.gatun.netlink;

import dev.gatun.bindings.internal.ifinfomsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.libmnl_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The transport speaks rtnetlink in a chosen namespace too: dumps, and errors with the kernel's text. */
@ExtendWith(FreshNamespaces.class)
class RouteSocketTest {

    @Test
    void linkDumpSeesTheNamespacesOwnLinksOnly(NetworkNamespace a) {
        Oracle.in(a, "ip", "link", "add", "gatun-br0", "type", "bridge");
        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.ROUTE, a); Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(1024, 8);
            MemorySegment nlh = libmnl_h.mnl_nlmsg_put_header(buf).reinterpret(1024);
            nlmsghdr.nlmsg_type(nlh, (short) kernel_h.RTM_GETLINK);
            nlmsghdr.nlmsg_flags(nlh, (short) (kernel_h.NLM_F_REQUEST | kernel_h.NLM_F_DUMP));
            MemorySegment ifi = libmnl_h.mnl_nlmsg_put_extra_header(nlh, ifinfomsg.sizeof()).reinterpret(ifinfomsg.sizeof());
            ifinfomsg.ifi_family(ifi, (byte) libc_h.AF_UNSPEC);
            int length = nlmsghdr.nlmsg_len(nlh);

            List<Integer> indexes = socket.dump(nlh, length, "list links", m -> ifinfomsg.ifi_index(m.asSlice(nlmsghdr.sizeof())));

            assertThat(indexes).hasSize(2); // lo and the bridge, nothing of the host's
        }
    }

    @Test
    void kernelErrorCarriesTheExtendedAckText(NetworkNamespace a) {
        try (NetlinkSocket socket = NetlinkSocket.open(NetlinkProtocol.ROUTE, a); Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(1024, 8);
            MemorySegment nlh = libmnl_h.mnl_nlmsg_put_header(buf).reinterpret(1024);
            int seq = socket.reserveSequences(1);
            nlmsghdr.nlmsg_type(nlh, (short) kernel_h.RTM_NEWLINK);
            nlmsghdr.nlmsg_flags(nlh,
                    (short) (kernel_h.NLM_F_REQUEST | kernel_h.NLM_F_ACK | kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL));
            nlmsghdr.nlmsg_seq(nlh, seq);
            libmnl_h.mnl_nlmsg_put_extra_header(nlh, ifinfomsg.sizeof());
            libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.IFLA_IFNAME, arena.allocateFrom("gatun-x"));
            MemorySegment info = libmnl_h.mnl_attr_nest_start(nlh, (short) kernel_h.IFLA_LINKINFO);
            libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.IFLA_INFO_KIND, arena.allocateFrom("gatun-no-such-kind"));
            libmnl_h.mnl_attr_nest_end(nlh, info);
            int length = nlmsghdr.nlmsg_len(nlh);

            NetlinkException e = Expect.thrown(NetlinkException.class, () -> socket.transact(nlh, length, seq,
                    Operations.of("add link gatun-x"), NetlinkSocket.AckedRange.only(0), null));

            assertThat(e.operation()).isEqualTo("add link gatun-x");
            assertThat(e.isNotSupported()).as(e.getMessage()).isTrue();
            assertThat(e.kernelMessage()).isNotBlank();
            assertThat(e.getMessage()).contains("kernel says: " + e.kernelMessage());
        }
    }
}
