package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.testing.ByteDiff;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

import static dev.gatun.nft.DataType.*;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun's bytes against the real nft's, with no kernel involved: each capture under test
 * resources nft-captures/ holds what nft sent for one command (capture.sh made them; the
 * command is in the file). gatun builds the same operation and must produce the same
 * messages: same type, same flags (gatun also asks for an ACK), same attributes byte for byte.
 * Sequence numbers and port ids are the only fields not compared.
 */
class NftEncodingTest {

    private static final Table GATUN = Table.of(Family.IP, "gatun");
    private static final NftSet PORTS = NftSet.map(GATUN, "ports4", List.of(INET_PROTO, INET_SERVICE),
            List.of(IPV4_ADDR, INET_SERVICE));

    @Test
    void addTable() throws IOException {
        assertSameAsNft("add-table", tx().add(GATUN.withComment("managed by gatun")));
    }

    @Test
    void addBaseChain() throws IOException {
        assertSameAsNft("add-base-chain", tx().add(
                Chain.base(GATUN, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT)));
    }

    @Test
    void addMapWithElements() throws IOException {
        assertSameAsNft("add-map-with-elements", tx().add(PORTS).addElements(PORTS, List.of(
                Element.of("tcp", "8080").to("10.88.0.2", "80").withComment("10.88.0.2"),
                Element.of("udp", "53").to("10.88.0.3", "53"))));
    }

    @Test
    void addIntervalSetWithElements() throws IOException {
        NftSet subnets = NftSet.of(GATUN, "subnets4", IPV4_ADDR).withFlags(SetFlag.INTERVAL);
        assertSameAsNft("add-interval-set-with-elements", tx().add(subnets)
                .addElements(subnets, List.of(Element.of("10.88.0.0/16"), Element.of("192.0.2.7"))));
    }

    @Test
    void addDnatMapRule() throws IOException {
        Chain pre = Chain.base(GATUN, "prerouting", ChainType.NAT, Hook.PREROUTING, Priority.DSTNAT, Verdict.Code.ACCEPT);
        assertSameAsNft("add-dnat-map-rule", tx().add(PORTS).add(Rule.in(pre).fibDaddrTypeLocal()
                .dnatMap(Family.IP, "ports4", Field.META_L4PROTO, Field.TH_DPORT).build()));
    }

    @Test
    void addFilterRule() throws IOException {
        Chain fwd = Chain.base(GATUN, "forward", ChainType.FILTER, Hook.FORWARD, 0, Verdict.Code.DROP);
        assertSameAsNft("add-filter-rule", tx().add(Rule.in(fwd).match(Field.IP_SADDR, "10.0.0.0/8")
                .match(Field.TCP_DPORT, "8000-8010").ctState("established", "related").counter().accept()
                .comment("from inside").build()));
    }

    @Test
    void addMarkSetRule() throws IOException {
        Chain fwd = Chain.base(GATUN, "forward", ChainType.FILTER, Hook.FORWARD, 0, Verdict.Code.DROP);
        assertSameAsNft("add-mark-set-rule", tx().add(Rule.in(fwd).match(Field.META_OIFNAME, "br0")
                .setMarkBits(0x00002000).accept().build()));
    }

    @Test
    void addMarkMatchRule() throws IOException {
        Chain fwd = Chain.base(Table.of(Family.INET, "filter"), "forward", ChainType.FILTER, Hook.FORWARD, 0,
                Verdict.Code.DROP);
        assertSameAsNft("add-mark-match-rule", tx().add(Rule.in(fwd).matchMarkBits(0x00002000).accept().build()));
    }

    @Test
    void deleteElement() throws IOException {
        assertSameAsNft("delete-element", tx().deleteElements(PORTS, List.of(Element.of("tcp", "8080"))));
    }

    @Test
    void addVerdictMapWithElements() throws IOException {
        NftSet vmap = NftSet.map(GATUN, "bridge-verdicts", List.of(IFNAME), List.of(VERDICT));
        assertSameAsNft("add-verdict-map-with-elements", tx().add(vmap).addElements(vmap, List.of(
                Element.of("gatun0").to(Verdict.ACCEPT), Element.of("gatun1").to(Verdict.jump("per-bridge")))));
    }

    @Test
    void timeoutIsSentInMilliseconds() {
        // Not a capture: a unit check that the set default timeout reaches the message as nft writes it.
        NftSet s = NftSet.of(GATUN, "recent", IPV4_ADDR).withFlags(SetFlag.TIMEOUT).withTimeout(Duration.ofSeconds(30));
        byte[] message = tx().add(s).encode().getFirst();
        assertThat(HexFormat.of().formatHex(message)).contains("0c000b000000000000007530");
    }

    private static Transaction tx() {
        return new Transaction(null);
    }

    private static void assertSameAsNft(String capture, Transaction tx) throws IOException {
        List<byte[]> expected = nftMessages(capture);
        List<byte[]> actual = tx.encode();
        assertThat(actual).as("number of messages for %s", capture).hasSize(expected.size());
        for (int i = 0; i < expected.size(); i++) {
            byte[] mine = actual.get(i);
            byte[] nfts = expected.get(i);
            assertThat(header(mine)).as("%s, message %d", capture, i).isEqualTo(header(nfts));
            ByteDiff.assertSameBytes(capture + ", message " + i + " after its header", Arrays.copyOfRange(nfts, 16, nfts.length),
                    Arrays.copyOfRange(mine, 16, mine.length), 16);
        }
    }

    /** Type and flags without ACK: what must match of the header (sequence and port id need not). */
    private static String header(byte[] message) {
        ByteBuffer b = ByteBuffer.wrap(message).order(ByteOrder.nativeOrder());
        int type = Short.toUnsignedInt(b.getShort(4));
        int flags = Short.toUnsignedInt(b.getShort(6)) & ~kernel_h.NLM_F_ACK;
        return "type 0x" + Integer.toHexString(type) + " flags 0x" + Integer.toHexString(flags);
    }

    /** The batch messages nft sent, without its cache queries and without the batch framing. */
    private static List<byte[]> nftMessages(String capture) throws IOException {
        Set<Integer> queries = Set.of(kernel_h.NFT_MSG_GETTABLE, kernel_h.NFT_MSG_GETCHAIN, kernel_h.NFT_MSG_GETRULE,
                kernel_h.NFT_MSG_GETSET, kernel_h.NFT_MSG_GETSETELEM, kernel_h.NFT_MSG_GETGEN, kernel_h.NFT_MSG_GETOBJ,
                kernel_h.NFT_MSG_GETFLOWTABLE);
        List<byte[]> out = new ArrayList<>();
        try (InputStream in = NftEncodingTest.class.getResourceAsStream("/nft-captures/" + capture + ".capture")) {
            assertThat(in).as("capture %s", capture).isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                ByteBuffer b = ByteBuffer.wrap(HexFormat.of().parseHex(line.strip())).order(ByteOrder.nativeOrder());
                while (b.remaining() >= 16) {
                    int start = b.position();
                    int len = b.getInt(start);
                    int type = Short.toUnsignedInt(b.getShort(start + 4));
                    boolean framing = type == kernel_h.NFNL_MSG_BATCH_BEGIN || type == kernel_h.NFNL_MSG_BATCH_END;
                    boolean query = (type >> 8) == kernel_h.NFNL_SUBSYS_NFTABLES && queries.contains(type & 0xff);
                    if (!framing && !query) {
                        byte[] m = new byte[len];
                        b.get(start, m);
                        out.add(m);
                    }
                    b.position(start + ((len + 3) & ~3));
                }
            }
        }
        return out;
    }
}
