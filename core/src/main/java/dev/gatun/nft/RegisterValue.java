package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.nft.expr.Meta;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;

/** What a register holds while {@link RuleRenderer} reads a rule, and how nft writes it and the values compared with it. */
sealed interface RegisterValue {

    /** A field nft knows ({@code field} non-null), or a load it names without one ("fib daddr type"). */
    record Load(Field field, String words) implements RegisterValue {}

    /** The first {@code bytes} bytes of an address field: nft's prefix match on whole bytes. */
    record Prefix(Field field, String words, int bytes) implements RegisterValue {}

    record Masked(RegisterValue of, Bytes mask, Bytes xor) implements RegisterValue {}

    record Data(Bytes bytes) implements RegisterValue {}

    record MapResult(String key, String map) implements RegisterValue {}

    record Raw(String words, int length) implements RegisterValue {}

    /** The value's name as nft writes it on the left of a comparison. */
    static String name(RegisterValue v) {
        return switch (v) {
            case Load l -> l.words();
            case Prefix p -> p.words();
            case Masked m -> name(m.of());
            case Raw r -> r.words();
            case Data d -> d.bytes().toString();
            case MapResult m -> m.key() + " map @" + m.map();
        };
    }

    /** A compared value in nft's words, by what was loaded. */
    static String text(RegisterValue v, Bytes data) {
        if (v instanceof Load l && l.field() != null) {
            Field f = l.field();
            return switch (f) {
                case META_NFPROTO -> NftKeywords.NETWORK_PROTOCOLS.word(data.get(0)).orElse(Integer.toString(data.get(0)));
                // A direction is one bit: what is not original is the reply.
                case CT_DIRECTION -> NftKeywords.CT_DIRECTIONS.word(data.get(0)).orElse("reply");
                case META_IIF, META_OIF -> Integer.toString(HostOrder.int32(data));
                case META_IIFNAME, META_OIFNAME -> ifname(data);
                default -> f.type.render(data);
            };
        }
        if (v instanceof Load l && l.words().startsWith("fib daddr type")) {
            int type = HostOrder.int32(data);
            return NftKeywords.ADDRESS_TYPES.word(type).orElse(Integer.toString(type));
        }
        if (v instanceof Load l && l.words().equals("fib daddr oif")) {
            return Integer.toString(HostOrder.int32(data));
        }
        if (v instanceof Load l && l.words().equals("meta iiftype")) {
            return NftKeywords.INTERFACE_TYPES.word(HostOrder.int16(data)).orElse(Integer.toString(data.get(0)));
        }
        return "0x" + new BigInteger(1, data.raw()).toString(16);
    }

    /** What a statement sets: meta mark set meta mark | 0x00002000, meta mark set 0x00000005, meta mark set ct mark. */
    static String setValue(Meta.Key key, RegisterValue v) {
        return switch (v) {
            case Masked m -> name(m.of()) + BitwiseText.of(m.mask(), m.xor(), b -> text(m.of(), b));
            case Data d -> key == Meta.Key.MARK ? DataType.MARK.render(d.bytes()) : name(d);
            default -> name(v);
        };
    }

    /** An interface name; one that fills its bytes without a NUL and is shorter than IFNAMSIZ is a wildcard. */
    private static String ifname(Bytes data) {
        byte[] raw = data.raw();
        int n = 0;
        while (n < raw.length && raw[n] != 0) {
            n++;
        }
        String name = new String(raw, 0, n, StandardCharsets.UTF_8);
        return "\"" + name + (n == raw.length && raw.length < libc_h.IFNAMSIZ ? "*" : "") + "\"";
    }
}
