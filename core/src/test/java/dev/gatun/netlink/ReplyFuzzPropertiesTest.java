package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.testing.ReplyFuzz;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every reply goes through before a decoder sees it, fed real datagrams and messages
 * (reply-captures/) mutated by ReplyFuzz: walking a datagram's messages, error messages with
 * and without the kernel's extended ACK, and the generation id. Each gives a value or gatun's
 * own exception.
 */
class ReplyFuzzPropertiesTest {

    private static final String[] CAPTURES = {"nft-list-ruleset", "ip-link-show", "ip-addr-show", "ip-route-show",
            "conntrack-list", "route-extack"};

    private static List<byte[]> allDatagrams() {
        return Stream.of(CAPTURES).flatMap(c -> ReplyFuzz.datagrams("/reply-captures/" + c + ".capture").stream()).toList();
    }

    /** Errors and acknowledgements: the one with the kernel's text, and the ACKs that end dumps (NLMSG_DONE carries an errno too). */
    private static List<byte[]> errors() {
        List<byte[]> out = new ArrayList<>(ReplyFuzz.messages("/reply-captures/route-extack.capture",
                t -> t == kernel_h.NLMSG_ERROR));
        out.addAll(ReplyFuzz.messages("/reply-captures/ip-link-show.capture", t -> t == kernel_h.NLMSG_DONE));
        return out;
    }

    @Provide
    Arbitrary<byte[]> datagrams() {
        return ReplyFuzz.mutated(allDatagrams(), NetlinkMessages.HEADER_BYTES);
    }

    @Provide
    Arbitrary<byte[]> errorMessages() {
        // After the header: the errno and the echoed request's header, then the request's attributes.
        return ReplyFuzz.mutated(errors(), NetlinkMessages.HEADER_BYTES + 4 + NetlinkMessages.HEADER_BYTES + 12);
    }

    @Provide
    Arbitrary<byte[]> generations() {
        return ReplyFuzz.mutated(ReplyFuzz.messages("/reply-captures/nft-list-ruleset.capture",
                t -> t == ((kernel_h.NFNL_SUBSYS_NFTABLES << 8) | kernel_h.NFT_MSG_NEWGEN)), 20);
    }

    @Example
    void theSeedsDecode() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocateFrom(JAVA_BYTE, errors().getFirst());
            assertThat(NetlinkMessages.error(error)).isEqualTo(-libc_h.ENETUNREACH);
            assertThat(NetlinkMessages.extendedAckMessage(error)).isEqualTo("Nexthop has invalid gateway");
            byte[] gen = ReplyFuzz.messages("/reply-captures/nft-list-ruleset.capture",
                    t -> t == ((kernel_h.NFNL_SUBSYS_NFTABLES << 8) | kernel_h.NFT_MSG_NEWGEN)).getFirst();
            assertThat(NftChannel.parseGeneration(arena.allocateFrom(JAVA_BYTE, gen), new int[1])).isTrue();
        }
    }

    /** A datagram as the receive loops walk it: every message, and the errno, sequence and text of each error. */
    @Property(tries = 1000)
    void datagrams(@ForAll("datagrams") byte[] datagram) {
        ReplyFuzz.decodes(datagram, d -> {
            List<Object> seen = new ArrayList<>();
            NetlinkMessages.forEach(d, d.byteSize(), m -> {
                seen.add(NetlinkMessages.type(m) + "/" + NetlinkMessages.flags(m) + "/" + NetlinkMessages.sequence(m));
                if (NetlinkMessages.type(m) == kernel_h.NLMSG_ERROR) {
                    seen.add(NetlinkMessages.error(m) + "/" + NetlinkMessages.errorSequence(m) + "/"
                            + NetlinkMessages.extendedAck(m));
                }
            });
            return seen;
        });
    }

    @Property(tries = 1000)
    void errors(@ForAll("errorMessages") byte[] message) {
        ReplyFuzz.decodes(message, m -> NetlinkMessages.type(m) + "/" + NetlinkMessages.error(m) + "/"
                + NetlinkMessages.errorSequence(m) + "/" + NetlinkMessages.extendedAck(m));
    }

    /** Ext-ack messages are also read when the request was echoed whole (no NLM_F_CAPPED), so its length matters. */
    @Property(tries = 500)
    void uncappedErrors(@ForAll("errorMessages") byte[] message) {
        byte[] uncapped = message.clone();
        if (uncapped.length >= 8) {
            uncapped[6] &= (byte) ~(kernel_h.NLM_F_CAPPED & 0xff);
            uncapped[7] &= (byte) ~(kernel_h.NLM_F_CAPPED >> 8);
            uncapped[7] |= (byte) (kernel_h.NLM_F_ACK_TLVS >> 8);
        }
        ReplyFuzz.decodes(uncapped, NetlinkMessages::extendedAck);
    }

    @Property(tries = 500)
    void generation(@ForAll("generations") byte[] message) {
        ReplyFuzz.decodes(message, m -> {
            int[] into = new int[1];
            return NftChannel.parseGeneration(m, into) + "/" + into[0];
        });
    }
}
