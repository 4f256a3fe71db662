package dev.gatun.nft;

import dev.gatun.GatunException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.testing.ReplyFuzz;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The nftables decoders fed what `nft list ruleset` received from the kernel, mutated
 * (ReplyFuzz): each decodes or throws gatun's own exception, and libnftnl under them never ends
 * the process, reads past a message or writes past its tables.
 */
class NftReplyFuzzPropertiesTest {

    private static final String RULESET = "/reply-captures/nft-list-ruleset.capture";
    /** The netlink header and the nfgenmsg: where an nftables message's attributes begin. */
    private static final int ATTRIBUTES = 20;

    private static List<byte[]> seeds(int message) {
        return ReplyFuzz.messages(RULESET, t -> t == ((kernel_h.NFNL_SUBSYS_NFTABLES << 8) | message));
    }

    @Provide
    Arbitrary<byte[]> tables() {
        return ReplyFuzz.mutated(seeds(kernel_h.NFT_MSG_NEWTABLE), ATTRIBUTES);
    }

    @Provide
    Arbitrary<byte[]> chains() {
        return ReplyFuzz.mutated(seeds(kernel_h.NFT_MSG_NEWCHAIN), ATTRIBUTES);
    }

    @Provide
    Arbitrary<byte[]> sets() {
        return ReplyFuzz.mutated(seeds(kernel_h.NFT_MSG_NEWSET), ATTRIBUTES);
    }

    @Provide
    Arbitrary<byte[]> elements() {
        return ReplyFuzz.mutated(seeds(kernel_h.NFT_MSG_NEWSETELEM), ATTRIBUTES);
    }

    @Provide
    Arbitrary<byte[]> rules() {
        return ReplyFuzz.mutated(seeds(kernel_h.NFT_MSG_NEWRULE), ATTRIBUTES);
    }

    @Provide
    Arbitrary<byte[]> anything() {
        return ReplyFuzz.mutated(ReplyFuzz.messages(RULESET, t -> (t >> 8) == kernel_h.NFNL_SUBSYS_NFTABLES), ATTRIBUTES);
    }

    @Example
    void theSeedsDecode() {
        for (byte[] m : seeds(kernel_h.NFT_MSG_NEWTABLE)) {
            assertThat(decode(m, TableCodec::read).name()).isNotBlank();
        }
        for (byte[] m : seeds(kernel_h.NFT_MSG_NEWCHAIN)) {
            assertThat(decode(m, ChainCodec::read).name()).isNotBlank();
        }
        for (byte[] m : seeds(kernel_h.NFT_MSG_NEWSET)) {
            assertThat(decode(m, SetCodec::read).name()).isNotBlank();
        }
        assertThat(seeds(kernel_h.NFT_MSG_NEWSETELEM).stream().mapToInt(m -> decode(m, ElementCodec::read).size()).sum())
                .isPositive();
        for (byte[] m : seeds(kernel_h.NFT_MSG_NEWRULE)) {
            assertThat(decode(m, RuleCodec::read).expressions()).isNotEmpty();
        }
    }

    @Property(tries = 500)
    void tables(@ForAll("tables") byte[] message) {
        ReplyFuzz.decodes(message, TableCodec::read);
    }

    @Property(tries = 500)
    void chains(@ForAll("chains") byte[] message) {
        ReplyFuzz.decodes(message, ChainCodec::read);
    }

    @Property(tries = 500)
    void sets(@ForAll("sets") byte[] message) {
        ReplyFuzz.decodes(message, m -> SetCodec.isAnonymous(m) ? "anonymous" : SetCodec.read(m));
    }

    /** Elements both as the kernel keeps them and rendered in nft's words for the set they belong to. */
    @Property(tries = 500)
    void elements(@ForAll("elements") byte[] message) {
        List<NftSet> sets = seeds(kernel_h.NFT_MSG_NEWSET).stream().map(s -> decode(s, SetCodec::read)).toList();
        ReplyFuzz.decodes(message, m -> {
            List<ElementCodec.Encoded> read = ElementCodec.read(m);
            read.forEach(ElementCodec.Encoded::stored);
            return sets.stream().map(s -> decodeOrNull(s, read)).toList();
        });
    }

    @Property(tries = 1000)
    void rules(@ForAll("rules") byte[] message) {
        ReplyFuzz.decodes(message, m -> {
            Rule r = RuleCodec.read(m);
            return r + RuleRenderer.render(r);
        });
    }

    /** Notifications carry the same messages; the monitor decodes whichever type comes. */
    @Property(tries = 500)
    void notifications(@ForAll("anything") byte[] message) {
        ReplyFuzz.decodes(message, RulesetMonitor::decode);
    }

    /** What libnftnl 1.2.4 would turn into exit(1), a read past a string or a write past a table, found before it runs. */
    @Example
    void whatLibnftnlCannotSurviveIsRefusedByName() {
        byte[] table = seeds(kernel_h.NFT_MSG_NEWTABLE).getFirst();
        // NFTA_TABLE_FLAGS of 2 bytes: abi_breakage() in libnftnl, which ends the process.
        byte[] shortFlags = withAttribute(table, RuleMessages.attribute(kernel_h.NFTA_TABLE_FLAGS, new byte[2]));
        assertThatThrownBy(() -> decode(shortFlags, TableCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("table attribute " + kernel_h.NFTA_TABLE_FLAGS + " holds 2 bytes, not 4");
        // A name without its NUL: strdup would read on past it.
        byte[] unterminated = withAttribute(table, RuleMessages.attribute(kernel_h.NFTA_TABLE_NAME, "abcd".getBytes()));
        assertThatThrownBy(() -> decode(unterminated, TableCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("without its closing NUL");
        // An expression without NFTA_EXPR_NAME: a NULL dereference in nftnl_expr_parse.
        byte[] rule = seeds(kernel_h.NFT_MSG_NEWRULE).getFirst();
        byte[] nameless = withAttribute(rule, RuleMessages.nested(kernel_h.NFTA_RULE_EXPRESSIONS,
                RuleMessages.nested(kernel_h.NFTA_LIST_ELEM, RuleMessages.nested(kernel_h.NFTA_EXPR_DATA))));
        assertThatThrownBy(() -> decode(nameless, RuleCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("expression without a name");
        // An element attribute of a type between NFTA_SET_ELEM_MAX and NFTA_SET_MAX: written past libnftnl's table.
        byte[] element = seeds(kernel_h.NFT_MSG_NEWSETELEM).getFirst();
        byte[] stray = withAttribute(element, RuleMessages.nested(kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS,
                RuleMessages.nested(kernel_h.NFTA_LIST_ELEM, RuleMessages.attribute(kernel_h.NFTA_SET_MAX, new byte[4]))));
        assertThatThrownBy(() -> decode(stray, ElementCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("past the end of its table");
        // More concatenated fields than libnftnl's array of NFT_REG32_COUNT holds.
        byte[][] fields = new byte[NftReplyCheck.CONCAT_FIELDS + 1][];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = RuleMessages.nested(kernel_h.NFTA_LIST_ELEM,
                    RuleMessages.attribute(kernel_h.NFTA_SET_FIELD_LEN, RuleMessages.bigEndian(4)));
        }
        byte[] set = seeds(kernel_h.NFT_MSG_NEWSET).getFirst();
        byte[] wide = withAttribute(set, RuleMessages.nested(kernel_h.NFTA_SET_DESC,
                RuleMessages.nested(kernel_h.NFTA_SET_DESC_CONCAT, fields)));
        assertThatThrownBy(() -> decode(wide, SetCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("more than " + NftReplyCheck.CONCAT_FIELDS);
        // A message that claims more bytes than it has: libnftnl would parse up to the claim.
        byte[] claims = table.clone();
        ByteBuffer.wrap(claims).order(ByteOrder.nativeOrder()).putInt(0, table.length + 64);
        assertThatThrownBy(() -> decode(claims, TableCodec::read)).isInstanceOf(MalformedReplyException.class)
                .hasMessageContaining("claims " + (table.length + 64) + " bytes");
    }

    private static List<Element> decodeOrNull(NftSet set, List<ElementCodec.Encoded> read) {
        try {
            return ElementValues.decode(set, read);
        } catch (GatunException e) {
            return null;
        }
    }

    /** {@code message} with {@code attribute} appended and its length told. */
    private static byte[] withAttribute(byte[] message, byte[] attribute) {
        byte[] out = Arrays.copyOf(message, message.length + attribute.length);
        System.arraycopy(attribute, 0, out, message.length, attribute.length);
        ByteBuffer.wrap(out).order(ByteOrder.nativeOrder()).putInt(0, out.length);
        return out;
    }

    private static <T> T decode(byte[] message, Function<MemorySegment, T> decoder) {
        try (Arena arena = Arena.ofConfined()) {
            return decoder.apply(arena.allocateFrom(JAVA_BYTE, message));
        }
    }
}
