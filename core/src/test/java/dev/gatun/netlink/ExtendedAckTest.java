package dev.gatun.netlink;

import dev.gatun.PrivilegeException;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Extended ACKs read from error replies built by hand from the kernel's layout
 * (include/uapi/linux/netlink.h), and the rejected attribute named from the request: no root.
 * Numbers are the uAPI's: NLMSG_ERROR 2, NLM_F_CAPPED 0x100, NLM_F_ACK_TLVS 0x200,
 * NLMSGERR_ATTR_MSG 1, _OFFS 2, _MISS_TYPE 5; NFT_MSG_NEWSETELEM 12 of subsystem 10;
 * NFTA_SET_ELEM_LIST_TABLE 1, _SET 2, _ELEMENTS 3; NFTA_LIST_ELEM 1; NFTA_SET_ELEM_KEY 1;
 * NFTA_DATA_VALUE 1; RTM_NEWLINK 16; IFLA_IFNAME 3, IFLA_LINKINFO 18, IFLA_INFO_KIND 1.
 */
class ExtendedAckTest {

    private static final int NEWSETELEM = (10 << 8) | 12;
    private static final int ENOENT = 2;

    @Test
    void aCappedErrorCarriesTextOffsetAndMissingType() {
        byte[] error = error(-ENOENT, 0x100 | 0x200, header(NEWSETELEM, 7),
                attr(1, strz("Set not found")), attr(2, u32(40)), attr(5, u32(4)));
        try (Arena arena = Arena.ofConfined()) {
            ExtendedAck ack = NetlinkMessages.extendedAck(arena.allocateFrom(JAVA_BYTE, error));
            assertThat(ack).isEqualTo(new ExtendedAck("Set not found", 40, 4));
        }
    }

    @Test
    void anUncappedErrorIsReadAfterTheWholeEchoedRequest() {
        byte[] request = elementRequest();
        byte[] error = error(-ENOENT, 0x200, request, attr(2, u32(28)));
        try (Arena arena = Arena.ofConfined()) {
            assertThat(NetlinkMessages.extendedAck(arena.allocateFrom(JAVA_BYTE, error)))
                    .isEqualTo(new ExtendedAck(null, 28, -1));
        }
    }

    @Test
    void anErrorWithoutTlvsHasNone() {
        byte[] error = error(-ENOENT, 0x100, header(NEWSETELEM, 7));
        try (Arena arena = Arena.ofConfined()) {
            assertThat(NetlinkMessages.extendedAck(arena.allocateFrom(JAVA_BYTE, error))).isEqualTo(ExtendedAck.NONE);
        }
    }

    @Test
    void aTopLevelAttributeIsNamed() {
        // 16-byte netlink header, 4-byte nfgenmsg: the table attribute starts at byte 20.
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 20)).isEqualTo("NFTA_SET_ELEM_LIST_TABLE (type 1)");
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 28)).isEqualTo("NFTA_SET_ELEM_LIST_SET (type 2)");
    }

    @Test
    void anElementOfTheListIsNamedByItsPathAndPosition() {
        // table 20-27, set 28-35, elements from 36: its header, then element 1 at 40 (16 bytes), element 2 at 56.
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 56))
                .isEqualTo("NFTA_SET_ELEM_LIST_ELEMENTS (type 3) > NFTA_LIST_ELEM (type 1) #2");
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 40))
                .isEqualTo("NFTA_SET_ELEM_LIST_ELEMENTS (type 3) > NFTA_LIST_ELEM (type 1) #1");
        // Inside element 2: its key at 60, the key's value at 64.
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 64))
                .isEqualTo("NFTA_SET_ELEM_LIST_ELEMENTS (type 3) > NFTA_LIST_ELEM (type 1) #2"
                        + " > NFTA_SET_ELEM_KEY (type 1) > NFTA_DATA_VALUE (type 1)");
    }

    @Test
    void anOffsetThatIsNoAttributeStartIsSaidAsABytePosition() {
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 17)).isEqualTo("the attribute at byte 17 of the request");
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 500)).isEqualTo("the attribute at byte 500 of the request");
        assertThat(describe(NetlinkProtocol.NETFILTER, elementRequest(), 22))
                .isEqualTo("the attribute at byte 22 of the request, inside NFTA_SET_ELEM_LIST_TABLE (type 1)");
    }

    @Test
    void rtnetlinkAttributesAreNamedAfterTheirFamilyHeader() {
        // 16-byte header, 16-byte ifinfomsg: IFLA_IFNAME at 32 (12 bytes), IFLA_LINKINFO at 44, IFLA_INFO_KIND at 48.
        byte[] request = message(16, 1, new byte[16], attr(3, strz("gatun-x")), attr(18 | 0x8000, attr(1, strz("veth"))));
        assertThat(describe(NetlinkProtocol.ROUTE, request, 32)).isEqualTo("IFLA_IFNAME (type 3)");
        assertThat(describe(NetlinkProtocol.ROUTE, request, 48)).isEqualTo("IFLA_LINKINFO (type 18) > IFLA_INFO_KIND (type 1)");
    }

    @Test
    void anAttributeOfAnUnknownMessageTypeIsNamedByNumber() {
        byte[] request = message((10 << 8) | 99, 1, new byte[4], attr(1, u32(0)), attr(7, u32(0)));
        assertThat(describe(NetlinkProtocol.NETFILTER, request, 28)).isEqualTo("type 7");
        // sock_diag requests carry a family header gatun does not lay out here: a byte position.
        assertThat(describe(NetlinkProtocol.SOCK_DIAG, request, 28)).isEqualTo("the attribute at byte 28 of the request");
    }

    @Test
    void theExceptionSaysWhatTheKernelRejectedAndAnswersItsPredicates() {
        NetlinkException e = new NetlinkException("add chain ip t c", ENOENT, "Table not found", "NFTA_CHAIN_TABLE (type 1)");
        assertThat(e.getMessage()).isEqualTo("add chain ip t c: ENOENT (No such file or directory); kernel says: Table not found;"
                + " rejected: NFTA_CHAIN_TABLE (type 1)");
        assertThat(e.rejectedAttribute()).isEqualTo("NFTA_CHAIN_TABLE (type 1)");
        assertThat(e.isNotFound()).isTrue();
        assertThat(e.isAlreadyExists()).isFalse();
        assertThat(e.isNoSuchDevice()).isFalse();
        assertThat(e.isNotSupported()).isFalse();
        assertThat(new NetlinkException("add table ip t", 17, null).isAlreadyExists()).isTrue();
        assertThat(new NetlinkException("get link x", 19, null).isNoSuchDevice()).isTrue();
        assertThat(new NetlinkException("add link x", 95, null).isNotSupported()).isTrue();
    }

    @Test
    void aPrivilegeErrorKeepsTheKernelsWords() {
        PrivilegeException e = new PrivilegeException("add table ip t in netns a", 1, "Operation not permitted by policy\n");
        assertThat(e.getMessage()).isEqualTo("gatun needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to add table ip t in netns a,"
                + " and the kernel refused it with EPERM (Operation not permitted by policy)");
        assertThat(new PrivilegeException("add table ip t", 1).getMessage()).endsWith("refused it with EPERM");
    }

    private static String describe(NetlinkProtocol protocol, byte[] request, int offset) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocateFrom(JAVA_BYTE, request);
            return RejectedAttribute.describe(protocol, m, offset);
        }
    }

    /** add element to set t s: table "t", set "s", two elements with 4-byte keys. */
    private static byte[] elementRequest() {
        byte[] element1 = attr(1 | 0x8000, attr(1 | 0x8000, attr(1, u32(1))));
        byte[] element2 = attr(1 | 0x8000, attr(1 | 0x8000, attr(1, u32(2))));
        return message(NEWSETELEM, 7, new byte[4], attr(1, strz("t")), attr(2, strz("s")),
                attr(3 | 0x8000, concat(element1, element2)));
    }

    private static byte[] header(int type, int sequence) {
        return message(type, sequence, new byte[0]);
    }

    private static byte[] message(int type, int sequence, byte[] familyHeader, byte[]... attributes) {
        byte[] body = concat(familyHeader, concat(attributes));
        ByteBuffer b = ByteBuffer.allocate(16 + body.length).order(ByteOrder.nativeOrder());
        b.putInt(16 + body.length).putShort((short) type).putShort((short) 0x5).putInt(sequence).putInt(0).put(body);
        return b.array();
    }

    /** An NLMSG_ERROR: header, errno, the (capped or whole) request, then the TLVs. */
    private static byte[] error(int errno, int flags, byte[] request, byte[]... tlvs) {
        byte[] body = concat(request, concat(tlvs));
        ByteBuffer b = ByteBuffer.allocate(16 + 4 + body.length).order(ByteOrder.nativeOrder());
        b.putInt(20 + body.length).putShort((short) 2).putShort((short) flags).putInt(7).putInt(0).putInt(errno).put(body);
        return b.array();
    }

    private static byte[] attr(int type, byte[] payload) {
        int length = 4 + payload.length;
        ByteBuffer b = ByteBuffer.allocate((length + 3) & -4).order(ByteOrder.nativeOrder());
        b.putShort((short) length).putShort((short) type).put(payload);
        return b.array();
    }

    private static byte[] u32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array();
    }

    private static byte[] strz(String s) {
        return (s + "\0").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer b = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(p -> p.length).sum());
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }
}
