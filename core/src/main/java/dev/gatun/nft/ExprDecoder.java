package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Dynset;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Lookup;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.MetaSet;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.NatFlag;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Registers;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;

import static dev.gatun.bindings.internal.libnftnl_h.*;
import static dev.gatun.nft.ExprAttributes.data;
import static dev.gatun.nft.ExprAttributes.isSet;
import static dev.gatun.nft.ExprAttributes.optional;
import static dev.gatun.nft.ExprAttributes.u32;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Expressions from a rule message that libnftnl parsed: a modelled kind becomes its record
 * when every attribute and value has a place in it; anything else is an {@link Opaque} that
 * keeps the attributes as libnftnl parsed them, so that nothing read is lost. Decoding
 * switches on kind names, which the compiler cannot check: NftExprRoundTripTest reads back
 * every permitted kind of {@link Expr}.
 */
final class ExprDecoder {

    /**
     * Room to re-serialise one expression: it came from a rule message, and a netlink attribute
     * (the rule's expression list included) is at most 64 KiB long.
     */
    private static final int SCRATCH_BYTES = 2 * 65536;

    /** The libnftnl attributes each modelled kind's record carries; any other makes the expression opaque. */
    private static final Map<String, Integer> MODELLED = Map.ofEntries(
            Map.entry("payload", bits(NFTNL_EXPR_PAYLOAD_DREG, NFTNL_EXPR_PAYLOAD_BASE, NFTNL_EXPR_PAYLOAD_OFFSET,
                    NFTNL_EXPR_PAYLOAD_LEN)),
            Map.entry("meta", bits(NFTNL_EXPR_META_KEY, NFTNL_EXPR_META_DREG, NFTNL_EXPR_META_SREG)),
            Map.entry("cmp", bits(NFTNL_EXPR_CMP_SREG, NFTNL_EXPR_CMP_OP, NFTNL_EXPR_CMP_DATA)),
            Map.entry("bitwise", bits(NFTNL_EXPR_BITWISE_SREG, NFTNL_EXPR_BITWISE_DREG, NFTNL_EXPR_BITWISE_LEN,
                    NFTNL_EXPR_BITWISE_MASK, NFTNL_EXPR_BITWISE_XOR, NFTNL_EXPR_BITWISE_OP)),
            Map.entry("range", bits(NFTNL_EXPR_RANGE_SREG, NFTNL_EXPR_RANGE_OP, NFTNL_EXPR_RANGE_FROM_DATA,
                    NFTNL_EXPR_RANGE_TO_DATA)),
            Map.entry("lookup", bits(NFTNL_EXPR_LOOKUP_SREG, NFTNL_EXPR_LOOKUP_DREG, NFTNL_EXPR_LOOKUP_SET,
                    NFTNL_EXPR_LOOKUP_SET_ID, NFTNL_EXPR_LOOKUP_FLAGS)),
            Map.entry("immediate", bits(NFTNL_EXPR_IMM_DREG, NFTNL_EXPR_IMM_DATA, NFTNL_EXPR_IMM_VERDICT,
                    NFTNL_EXPR_IMM_CHAIN)),
            Map.entry("nat", bits(NFTNL_EXPR_NAT_TYPE, NFTNL_EXPR_NAT_FAMILY, NFTNL_EXPR_NAT_REG_ADDR_MIN,
                    NFTNL_EXPR_NAT_REG_ADDR_MAX, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFTNL_EXPR_NAT_REG_PROTO_MAX,
                    NFTNL_EXPR_NAT_FLAGS)),
            Map.entry("masq", bits(NFTNL_EXPR_MASQ_FLAGS, NFTNL_EXPR_MASQ_REG_PROTO_MIN, NFTNL_EXPR_MASQ_REG_PROTO_MAX)),
            Map.entry("redir", bits(NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFTNL_EXPR_REDIR_REG_PROTO_MAX,
                    NFTNL_EXPR_REDIR_FLAGS)),
            Map.entry("reject", bits(NFTNL_EXPR_REJECT_TYPE, NFTNL_EXPR_REJECT_CODE)),
            Map.entry("counter", bits(NFTNL_EXPR_CTR_PACKETS, NFTNL_EXPR_CTR_BYTES)),
            Map.entry("ct", bits(NFTNL_EXPR_CT_DREG, NFTNL_EXPR_CT_KEY, NFTNL_EXPR_CT_DIR)),
            Map.entry("fib", bits(NFTNL_EXPR_FIB_DREG, NFTNL_EXPR_FIB_RESULT, NFTNL_EXPR_FIB_FLAGS)),
            Map.entry("log", bits(NFTNL_EXPR_LOG_PREFIX, NFTNL_EXPR_LOG_LEVEL, NFTNL_EXPR_LOG_GROUP)),
            // A dynset with data or expressions of its own (a meter, a map) stays opaque; so does one with flags.
            Map.entry("dynset", bits(NFTNL_EXPR_DYNSET_SREG_KEY, NFTNL_EXPR_DYNSET_OP, NFTNL_EXPR_DYNSET_SET_NAME,
                    NFTNL_EXPR_DYNSET_SET_ID, NFTNL_EXPR_DYNSET_TIMEOUT, NFTNL_EXPR_DYNSET_FLAGS)));

    private ExprDecoder() {}

    /** The expression libnftnl parsed from a rule message: its record, or else an opaque copy. */
    static Expr fromNative(Arena arena, MemorySegment x) {
        String kind = Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_NAME));
        Expr modelled = modelled(arena, kind, x);
        return modelled != null ? modelled : opaque(arena, kind, x);
    }

    /**
     * The record for the expression, or null where gatun has none: an unknown kind, an
     * attribute the record has no place for, or a value it has no name for (a meta key, a
     * bitwise shift). Each would otherwise be read as something it is not.
     */
    private static Expr modelled(Arena arena, String kind, MemorySegment x) {
        Integer carried = MODELLED.get(kind);
        if (carried == null || (attributesSet(x) & ~carried) != 0) {
            return null;
        }
        try {
            return decode(arena, kind, x);
        } catch (IllegalArgumentException unnamedValue) {
            return null;
        }
    }

    private static Expr decode(Arena arena, String kind, MemorySegment x) {
        return switch (kind) {
            case "payload" -> new Payload(Payload.Base.of(u32(x, NFTNL_EXPR_PAYLOAD_BASE)), u32(x, NFTNL_EXPR_PAYLOAD_OFFSET),
                    u32(x, NFTNL_EXPR_PAYLOAD_LEN), u32(x, NFTNL_EXPR_PAYLOAD_DREG));
            case "meta" -> meta(x);
            case "cmp" -> new Cmp(u32(x, NFTNL_EXPR_CMP_SREG), CmpOp.of(u32(x, NFTNL_EXPR_CMP_OP)),
                    data(arena, x, NFTNL_EXPR_CMP_DATA));
            case "bitwise" -> optional(x, NFTNL_EXPR_BITWISE_OP) != kernel_h.NFT_BITWISE_BOOL ? null
                    : new Bitwise(u32(x, NFTNL_EXPR_BITWISE_SREG), u32(x, NFTNL_EXPR_BITWISE_DREG),
                    data(arena, x, NFTNL_EXPR_BITWISE_MASK), data(arena, x, NFTNL_EXPR_BITWISE_XOR),
                    isSet(x, NFTNL_EXPR_BITWISE_OP));
            case "range" -> new Range(u32(x, NFTNL_EXPR_RANGE_SREG), CmpOp.of(u32(x, NFTNL_EXPR_RANGE_OP)),
                    data(arena, x, NFTNL_EXPR_RANGE_FROM_DATA), data(arena, x, NFTNL_EXPR_RANGE_TO_DATA));
            case "lookup" -> lookup(x);
            case "immediate" -> immediate(arena, x);
            case "nat" -> new Nat(Nat.Type.of(u32(x, NFTNL_EXPR_NAT_TYPE)), Family.of(u32(x, NFTNL_EXPR_NAT_FAMILY)),
                    optional(x, NFTNL_EXPR_NAT_REG_ADDR_MIN), optional(x, NFTNL_EXPR_NAT_REG_ADDR_MAX),
                    optional(x, NFTNL_EXPR_NAT_REG_PROTO_MIN), optional(x, NFTNL_EXPR_NAT_REG_PROTO_MAX),
                    NatFlag.of(optional(x, NFTNL_EXPR_NAT_FLAGS)));
            case "masq" -> new Masquerade(NatFlag.of(optional(x, NFTNL_EXPR_MASQ_FLAGS)), optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MIN),
                    optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MAX));
            case "redir" -> new Redirect(optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MIN),
                    optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MAX), NatFlag.of(optional(x, NFTNL_EXPR_REDIR_FLAGS)));
            case "reject" -> new Reject(u32(x, NFTNL_EXPR_REJECT_TYPE),
                    Byte.toUnsignedInt(nftnl_expr_get_u8(x, (short) NFTNL_EXPR_REJECT_CODE)));
            case "counter" -> new Counter(nftnl_expr_get_u64(x, (short) NFTNL_EXPR_CTR_PACKETS),
                    nftnl_expr_get_u64(x, (short) NFTNL_EXPR_CTR_BYTES));
            case "ct" -> new Ct(Ct.Key.of(u32(x, NFTNL_EXPR_CT_KEY)),
                    isSet(x, NFTNL_EXPR_CT_DIR) ? Byte.toUnsignedInt(nftnl_expr_get_u8(x, (short) NFTNL_EXPR_CT_DIR)) : null,
                    u32(x, NFTNL_EXPR_CT_DREG));
            case "fib" -> new Fib(u32(x, NFTNL_EXPR_FIB_FLAGS), u32(x, NFTNL_EXPR_FIB_RESULT), u32(x, NFTNL_EXPR_FIB_DREG));
            case "log" -> new Log(isSet(x, NFTNL_EXPR_LOG_PREFIX)
                    ? Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_LOG_PREFIX)) : null,
                    isSet(x, NFTNL_EXPR_LOG_LEVEL) ? u32(x, NFTNL_EXPR_LOG_LEVEL) : null,
                    isSet(x, NFTNL_EXPR_LOG_GROUP)
                            ? Short.toUnsignedInt(nftnl_expr_get_u16(x, (short) NFTNL_EXPR_LOG_GROUP)) : null);
            case "dynset" -> dynset(x);
            default -> null;
        };
    }

    /**
     * The kernel lists flags 0 and a timeout of 0 for a dynset that has neither (the set's default
     * timeout then applies): read as none, as nft reads them. Null for any flag (an inverted one).
     */
    private static Dynset dynset(MemorySegment x) {
        if (optional(x, NFTNL_EXPR_DYNSET_FLAGS) != 0) {
            return null;
        }
        long timeout = isSet(x, NFTNL_EXPR_DYNSET_TIMEOUT) ? nftnl_expr_get_u64(x, (short) NFTNL_EXPR_DYNSET_TIMEOUT) : 0;
        return new Dynset(Dynset.Op.of(u32(x, NFTNL_EXPR_DYNSET_OP)), u32(x, NFTNL_EXPR_DYNSET_SREG_KEY),
                Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_DYNSET_SET_NAME)),
                timeout == 0 ? null : Duration.ofMillis(timeout));
    }

    /** A load with a destination register, a set with a source one; null for neither or both. */
    private static Expr meta(MemorySegment x) {
        Meta.Key key = Meta.Key.of(u32(x, NFTNL_EXPR_META_KEY));
        boolean load = isSet(x, NFTNL_EXPR_META_DREG);
        if (load == isSet(x, NFTNL_EXPR_META_SREG)) {
            return null;
        }
        return load ? new Meta(key, u32(x, NFTNL_EXPR_META_DREG)) : new MetaSet(key, u32(x, NFTNL_EXPR_META_SREG));
    }

    /** Null for lookup flags other than inversion. */
    private static Lookup lookup(MemorySegment x) {
        int flags = optional(x, NFTNL_EXPR_LOOKUP_FLAGS);
        if ((flags & ~kernel_h.NFT_LOOKUP_F_INV) != 0) {
            return null;
        }
        return new Lookup(u32(x, NFTNL_EXPR_LOOKUP_SREG), Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_LOOKUP_SET)),
                isSet(x, NFTNL_EXPR_LOOKUP_DREG) ? u32(x, NFTNL_EXPR_LOOKUP_DREG) : null,
                (flags & kernel_h.NFT_LOOKUP_F_INV) != 0);
    }

    private static Expr immediate(Arena arena, MemorySegment x) {
        int dreg = u32(x, NFTNL_EXPR_IMM_DREG);
        if (dreg == Registers.VERDICT) {
            Verdict.Code code = Verdict.Code.of(u32(x, NFTNL_EXPR_IMM_VERDICT));
            String chain = isSet(x, NFTNL_EXPR_IMM_CHAIN)
                    ? Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_IMM_CHAIN)) : null;
            return new VerdictExpr(new Verdict(code, chain));
        }
        return new Immediate(dreg, data(arena, x, NFTNL_EXPR_IMM_DATA));
    }

    /**
     * The expression's attributes as libnftnl writes them back (it parsed what the kernel sent;
     * an attribute newer than libnftnl is not kept). Written into scratch room, not the rule
     * message, and cut out of it.
     */
    private static Opaque opaque(Arena arena, String kind, MemorySegment x) {
        MemorySegment scratch = NetlinkMessages.startRequest(arena.allocate(SCRATCH_BYTES, 4), 0, 0);
        nftnl_expr_build_payload(scratch, x);
        MemorySegment written = scratch.asSlice(0, nlmsghdr.nlmsg_len(scratch));
        byte[][] data = {new byte[0]};
        NetlinkMessages.forEachAttribute(written, NetlinkMessages.HEADER_BYTES, (type, payload) -> {
            if (type == kernel_h.NFTA_EXPR_DATA) {
                data[0] = payload.toArray(JAVA_BYTE);
            }
        });
        Opaque read = new Opaque(kind, Bytes.wrap(data[0]));
        return kind.equals("dynset") ? withoutZeroTimeout(read) : read;
    }

    /**
     * The kernel lists a dynset's timeout also when it is 0 (none), and refuses the attribute in
     * a rule for a set without timeouts (EOPNOTSUPP). Left out, as nft leaves it out, the rule
     * can be added again and means the same.
     */
    private static Opaque withoutZeroTimeout(Opaque dynset) {
        return Opaque.of(dynset.kind(), dynset.attributes().stream()
                .filter(a -> a.type() != kernel_h.NFTA_DYNSET_TIMEOUT || !a.value().isZero()).toList());
    }

    /** Which of libnftnl's attribute flags (a 32-bit map, so types 1 to 31) are set. */
    private static int attributesSet(MemorySegment x) {
        int set = 0;
        for (int type = NFTNL_EXPR_BASE; type < Integer.SIZE; type++) {
            if (isSet(x, type)) {
                set |= 1 << type;
            }
        }
        return set;
    }

    private static int bits(int... types) {
        int out = 0;
        for (int t : types) {
            out |= 1 << t;
        }
        return out;
    }
}
