package dev.gatun.nft.expr;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.nft.value.Bytes;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * An expression gatun does not model, kept as the kernel's own attributes so that nothing is
 * lost: an xtables match or target that iptables-nft wrote, a limit, a quota, or a kind gatun
 * knows used with an attribute its record has no place for (a payload write, a meta key it has
 * no name for). {@code data} is the payload of NFTA_EXPR_DATA: the expression's netlink
 * attributes, in the kernel's byte order. A rule read back with one is written again unchanged.
 *
 * <p>Meant to pass on what was read. The kernel, not gatun, checks what the attributes say,
 * and only when the rule is added.
 */
public record Opaque(String kind, Bytes data) implements Expr {

    private static final int HEADER = (int) nlattr.sizeof();

    public Opaque {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(data, "data");
        if (kind.isEmpty() || kind.indexOf('\0') >= 0) {
            throw new InvalidInputException("an expression kind must be a non-empty name without NUL, not '" + kind + "'");
        }
        parse(data.toArray());
    }

    /** An opaque expression with these attributes, each padded as netlink pads them. */
    public static Opaque of(String kind, List<Attribute> attributes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Attribute a : attributes) {
            int length = HEADER + a.value().length();
            ByteBuffer b = ByteBuffer.allocate(NetlinkMessages.align(length)).order(ByteOrder.nativeOrder());
            b.putShort((short) length).putShort((short) (a.type() | (a.nested() ? kernel_h.NLA_F_NESTED : 0)));
            out.writeBytes(b.put(a.value().toArray()).array());
        }
        return new Opaque(kind, Bytes.of(out.toByteArray()));
    }

    /** One netlink attribute: its type without the flag bits, whether it holds attributes, and its payload. */
    public record Attribute(int type, boolean nested, Bytes value) {

        /** The attributes inside a nested one. */
        public List<Attribute> children() {
            return nested ? parse(value.toArray()) : List.of();
        }
    }

    /** Whether this is an xtables match or target (iptables-nft's -m and -j extensions). */
    public boolean isXtables() {
        return kind.equals("match") || kind.equals("target");
    }

    /** The attributes of {@code data}, in order. */
    public List<Attribute> attributes() {
        return parse(data.toArray());
    }

    /** Splits netlink attributes; the run must be whole attributes, each padded to 4 bytes. */
    private static List<Attribute> parse(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        List<Attribute> out = new ArrayList<>();
        int at = 0;
        while (at < raw.length) {
            int length = at + HEADER <= raw.length ? Short.toUnsignedInt(b.getShort(at)) : 0;
            if (length < HEADER || at + length > raw.length) {
                throw new InvalidInputException("expression attributes are malformed at byte " + at + " of " + raw.length);
            }
            int type = Short.toUnsignedInt(b.getShort(at + 2));
            out.add(new Attribute(type & kernel_h.NLA_TYPE_MASK, (type & kernel_h.NLA_F_NESTED) != 0,
                    Bytes.of(Arrays.copyOfRange(raw, at + HEADER, at + length))));
            at += NetlinkMessages.align(length);
        }
        if (at != raw.length) {
            throw new InvalidInputException("expression attributes end in a partial attribute (" + raw.length + " bytes)");
        }
        return out;
    }
}
