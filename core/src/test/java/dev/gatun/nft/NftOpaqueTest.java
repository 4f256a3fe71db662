package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.nft.expr.Payload;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static dev.gatun.nft.RuleMessages.attribute;
import static dev.gatun.nft.RuleMessages.attributes;
import static dev.gatun.nft.RuleMessages.bigEndian;
import static dev.gatun.nft.RuleMessages.nested;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Expressions gatun does not model, without a kernel: a rule message written with one is read
 * back with the same attributes, a kind gatun knows but with an attribute its record lacks is
 * not read as the record, and the rendering is one nft refuses.
 */
class NftOpaqueTest {

    private static final Table FILTER = Table.of(Family.IP, "filter");
    private static final Chain INPUT = Chain.regular(FILTER, "INPUT");

    /** What iptables-nft writes for -m conntrack --ctstate RELATED,ESTABLISHED (info shortened). */
    static final Opaque CONNTRACK = new Opaque("match", attributes(
            attribute(kernel_h.NFTA_MATCH_NAME, "conntrack\0".getBytes(StandardCharsets.US_ASCII)),
            attribute(kernel_h.NFTA_MATCH_REV, bigEndian(3)),
            attribute(kernel_h.NFTA_MATCH_INFO, new byte[] {1, 2, 3, 4, 5, 6})));

    /** {@code tcp dport set 8080} as the kernel has it: a payload write, with checksum fix-up. */
    private static final Opaque PAYLOAD_WRITE = new Opaque("payload", attributes(
            attribute(kernel_h.NFTA_PAYLOAD_SREG, bigEndian(1)),
            attribute(kernel_h.NFTA_PAYLOAD_BASE, bigEndian(kernel_h.NFT_PAYLOAD_TRANSPORT_HEADER)),
            attribute(kernel_h.NFTA_PAYLOAD_OFFSET, bigEndian(2)),
            attribute(kernel_h.NFTA_PAYLOAD_LEN, bigEndian(2)),
            attribute(kernel_h.NFTA_PAYLOAD_CSUM_TYPE, bigEndian(kernel_h.NFT_PAYLOAD_CSUM_INET)),
            attribute(kernel_h.NFTA_PAYLOAD_CSUM_OFFSET, bigEndian(16))));

    @Test
    void anXtablesMatchIsReadBackWithTheAttributesItWasWrittenWith() {
        Rule rule = Rule.in(INPUT).match(Field.IP_SADDR, "10.0.0.1").raw(CONNTRACK).accept().build();

        assertThat(RuleMessages.readBack(rule).expressions()).isEqualTo(rule.expressions());
    }

    @Test
    void theMessageCarriesTheAttributesAsTheyWere() {
        byte[] message = RuleMessages.encode(Rule.in(INPUT).raw(CONNTRACK).build());

        assertThat(indexOf(message, CONNTRACK.data().toArray())).isPositive();
    }

    @Test
    void aKindGatunKnowsWithAnAttributeItsRecordLacksStaysOpaque() {
        Rule rule = Rule.in(INPUT).raw(PAYLOAD_WRITE).build();

        List<Expr> read = RuleMessages.readBack(rule).expressions();

        assertThat(read).hasSize(1).first().isNotInstanceOf(Payload.class).isEqualTo(PAYLOAD_WRITE);
    }

    @Test
    void aNatFlagWithoutANameKeepsTheExpressionOpaque() {
        // Bit 0x80 is above every NF_NAT_RANGE_* flag the kernel has now: read as a Masquerade, it would be lost.
        Opaque masquerade = new Opaque("masq", attributes(attribute(kernel_h.NFTA_MASQ_FLAGS, bigEndian(0x80))));
        Rule rule = Rule.in(INPUT).raw(masquerade).build();

        List<Expr> read = RuleMessages.readBack(rule).expressions();

        assertThat(read).hasSize(1).first().isNotInstanceOf(Masquerade.class).isEqualTo(masquerade);
    }

    @Test
    void aNatTypeWithoutANameKeepsTheExpressionOpaque() {
        // The kernel has snat (0) and dnat (1): read as a Nat, type 2 would have become a dnat.
        Opaque nat = new Opaque("nat", attributes(attribute(kernel_h.NFTA_NAT_TYPE, bigEndian(2)),
                attribute(kernel_h.NFTA_NAT_FAMILY, bigEndian(2))));
        Rule rule = Rule.in(INPUT).raw(nat).build();

        List<Expr> read = RuleMessages.readBack(rule).expressions();

        assertThat(read).hasSize(1).first().isNotInstanceOf(Nat.class).isEqualTo(nat);
    }

    @Test
    void aProtocolMatchBeforeAnXtablesExpressionIsWrittenAsTheRulesXtablesProtocol() {
        Rule rule = Rule.in(INPUT).match(Field.META_L4PROTO, "udp").raw(CONNTRACK).build();

        assertThat(compat(RuleMessages.encode(rule))).containsExactly(17, 0);
        assertThat(compat(RuleMessages.encode(Rule.in(INPUT).match(Field.META_L4PROTO, "udp").accept().build()))).isEmpty();
    }

    @Test
    void xtablesRendersAsNftListsIt() {
        Rule rule = Rule.in(INPUT).match(Field.META_IIFNAME, "br0").raw(CONNTRACK).counter().accept().build();

        assertThat(NftRenderer.render(rule)).isEqualTo("iifname \"br0\" xt match conntrack counter accept");
    }

    @Test
    void otherKindsRenderTheirAttributesBetweenBackquotes() {
        Opaque limit = new Opaque("limit", attributes(attribute(1, new byte[] {0, 0, 0, 0, 0, 0, 0, 10}),
                nested(2, attribute(1, bigEndian(7)))));

        assertThat(NftRenderer.render(Rule.in(INPUT).raw(limit).accept().build()))
                .isEqualTo("`limit 1=0x000000000000000a 2={1=0x00000007}` accept");
    }

    @Test
    void aRegisterLoadedBeforeAnOpaqueExpressionIsNotNamedAfterIt() {
        Rule rule = Rule.in(INPUT).match(Field.META_MARK, "0x1").raw(PAYLOAD_WRITE).build();
        List<Expr> exprs = new ArrayList<>(rule.expressions());
        exprs.add(rule.expressions().get(1)); // compares register 1 again, after the opaque one

        String rendered = NftRenderer.render(new Rule(Family.IP, "filter", "INPUT", exprs, null, 0));

        assertThat(rendered.substring(rendered.lastIndexOf('`'))).startsWith("` reg 1 ").doesNotContain("mark");
    }

    @Test
    void attributesMakeTheSameExpressionAgain() {
        Opaque limit = new Opaque("limit", attributes(attribute(1, bigEndian(10)), nested(2, attribute(1, bigEndian(7)))));

        assertThat(Opaque.of("limit", limit.attributes())).isEqualTo(limit);
        assertThat(Opaque.of("match", CONNTRACK.attributes())).isEqualTo(CONNTRACK);
    }

    @Test
    void malformedAttributesAreRefused() {
        assertThatThrownBy(() -> new Opaque("limit", Bytes.of((byte) 8, (byte) 0, (byte) 1, (byte) 0)))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> new Opaque("", Bytes.of())).isInstanceOf(InvalidInputException.class);
    }

    /** The NFTA_RULE_COMPAT protocol and flags of a rule message, empty if it has none. */
    private static List<Integer> compat(byte[] message) {
        List<Integer> out = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocateFrom(JAVA_BYTE, message);
            NetlinkMessages.forEachAttribute(m, NetlinkMessages.HEADER_BYTES + 4, (type, payload) -> {
                if (type == kernel_h.NFTA_RULE_COMPAT) {
                    NetlinkMessages.forEachAttribute(payload, 0, (t, p) -> out.add(p.get(NetlinkMessages.NETWORK_INT, 0)));
                }
            });
        }
        return out;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
