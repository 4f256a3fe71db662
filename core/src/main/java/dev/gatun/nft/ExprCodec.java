package dev.gatun.nft;

import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Lookup;
import dev.gatun.nft.expr.Masquerade;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Nat;
import dev.gatun.nft.expr.Payload;
import dev.gatun.nft.expr.Range;
import dev.gatun.nft.expr.Redirect;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/** Expressions to and from libnftnl expression objects, attribute by attribute. */
final class ExprCodec {

    private ExprCodec() {}

    /** A libnftnl expression for {@code e}; the rule it is added to owns it. */
    static MemorySegment toNative(Arena arena, Expr e, java.util.function.ToIntFunction<String> newSetIds) {
        MemorySegment x = nftnl_expr_alloc(arena.allocateFrom(e.kind()));
        switch (e) {
            case Payload p -> {
                u32(x, NFTNL_EXPR_PAYLOAD_DREG, p.dreg());
                u32(x, NFTNL_EXPR_PAYLOAD_BASE, p.base().value);
                u32(x, NFTNL_EXPR_PAYLOAD_OFFSET, p.offset());
                u32(x, NFTNL_EXPR_PAYLOAD_LEN, p.length());
            }
            case Meta m -> {
                u32(x, NFTNL_EXPR_META_KEY, m.key().value);
                u32(x, NFTNL_EXPR_META_DREG, m.dreg());
            }
            case Cmp c -> {
                u32(x, NFTNL_EXPR_CMP_SREG, c.sreg());
                u32(x, NFTNL_EXPR_CMP_OP, c.op().value);
                data(arena, x, NFTNL_EXPR_CMP_DATA, c.data());
            }
            case Bitwise b -> {
                u32(x, NFTNL_EXPR_BITWISE_SREG, b.sreg());
                u32(x, NFTNL_EXPR_BITWISE_DREG, b.dreg());
                u32(x, NFTNL_EXPR_BITWISE_LEN, b.mask().length());
                data(arena, x, NFTNL_EXPR_BITWISE_MASK, b.mask());
                data(arena, x, NFTNL_EXPR_BITWISE_XOR, b.xor());
            }
            case Range r -> {
                u32(x, NFTNL_EXPR_RANGE_SREG, r.sreg());
                u32(x, NFTNL_EXPR_RANGE_OP, r.op().value);
                data(arena, x, NFTNL_EXPR_RANGE_FROM_DATA, r.from());
                data(arena, x, NFTNL_EXPR_RANGE_TO_DATA, r.to());
            }
            case Lookup l -> {
                u32(x, NFTNL_EXPR_LOOKUP_SREG, l.sreg());
                if (l.dreg() != null) {
                    u32(x, NFTNL_EXPR_LOOKUP_DREG, l.dreg());
                }
                nftnl_expr_set_str(x, (short) NFTNL_EXPR_LOOKUP_SET, arena.allocateFrom(l.set()));
                int setId = newSetIds.applyAsInt(l.set());
                if (setId > 0) {
                    u32(x, NFTNL_EXPR_LOOKUP_SET_ID, setId);
                }
                if (l.inverted()) {
                    u32(x, NFTNL_EXPR_LOOKUP_FLAGS, dev.gatun.bindings.internal.kernel_h.NFT_LOOKUP_F_INV);
                }
            }
            case Immediate i -> {
                u32(x, NFTNL_EXPR_IMM_DREG, i.dreg());
                data(arena, x, NFTNL_EXPR_IMM_DATA, i.data());
            }
            case VerdictExpr v -> {
                u32(x, NFTNL_EXPR_IMM_DREG, dev.gatun.nft.expr.Registers.VERDICT);
                u32(x, NFTNL_EXPR_IMM_VERDICT, v.verdict().code().value());
                if (v.verdict().chain() != null) {
                    nftnl_expr_set_str(x, (short) NFTNL_EXPR_IMM_CHAIN, arena.allocateFrom(v.verdict().chain()));
                }
            }
            case Nat n -> {
                u32(x, NFTNL_EXPR_NAT_TYPE, n.type().value);
                u32(x, NFTNL_EXPR_NAT_FAMILY, n.family().nfproto());
                optional(x, NFTNL_EXPR_NAT_REG_ADDR_MIN, n.addrMin());
                optional(x, NFTNL_EXPR_NAT_REG_ADDR_MAX, n.addrMax());
                optional(x, NFTNL_EXPR_NAT_REG_PROTO_MIN, n.protoMin());
                optional(x, NFTNL_EXPR_NAT_REG_PROTO_MAX, n.protoMax());
                optional(x, NFTNL_EXPR_NAT_FLAGS, n.flags());
            }
            case Masquerade m -> {
                optional(x, NFTNL_EXPR_MASQ_FLAGS, m.flags());
                optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MIN, m.protoMin());
                optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MAX, m.protoMax());
            }
            case Redirect r -> {
                optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MIN, r.protoMin());
                optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MAX, r.protoMax());
                optional(x, NFTNL_EXPR_REDIR_FLAGS, r.flags());
            }
            case Reject r -> {
                u32(x, NFTNL_EXPR_REJECT_TYPE, r.type());
                nftnl_expr_set_u8(x, (short) NFTNL_EXPR_REJECT_CODE, (byte) r.code());
            }
            case Counter c -> {
                if (c.packets() != 0 || c.bytes() != 0) {
                    nftnl_expr_set_u64(x, (short) NFTNL_EXPR_CTR_PACKETS, c.packets());
                    nftnl_expr_set_u64(x, (short) NFTNL_EXPR_CTR_BYTES, c.bytes());
                }
            }
            case Ct c -> {
                u32(x, NFTNL_EXPR_CT_DREG, c.dreg());
                u32(x, NFTNL_EXPR_CT_KEY, c.key().value);
                if (c.direction() != null) {
                    nftnl_expr_set_u8(x, (short) NFTNL_EXPR_CT_DIR, (byte) (int) c.direction());
                }
            }
            case Fib f -> {
                u32(x, NFTNL_EXPR_FIB_DREG, f.dreg());
                u32(x, NFTNL_EXPR_FIB_RESULT, f.result());
                u32(x, NFTNL_EXPR_FIB_FLAGS, f.flags());
            }
            case Log l -> {
                if (l.prefix() != null) {
                    nftnl_expr_set_str(x, (short) NFTNL_EXPR_LOG_PREFIX, arena.allocateFrom(l.prefix()));
                }
                if (l.level() != null) {
                    u32(x, NFTNL_EXPR_LOG_LEVEL, l.level());
                }
                if (l.group() != null) {
                    nftnl_expr_set_u16(x, (short) NFTNL_EXPR_LOG_GROUP, (short) (int) l.group());
                }
            }
        }
        return x;
    }

    /** The expression libnftnl parsed from a rule message. */
    static Expr fromNative(Arena arena, MemorySegment x) {
        String kind = Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_NAME));
        return switch (kind) {
            case "payload" -> new Payload(Payload.Base.of(u32(x, NFTNL_EXPR_PAYLOAD_BASE)), u32(x, NFTNL_EXPR_PAYLOAD_OFFSET),
                    u32(x, NFTNL_EXPR_PAYLOAD_LEN), u32(x, NFTNL_EXPR_PAYLOAD_DREG));
            case "meta" -> new Meta(Meta.Key.of(u32(x, NFTNL_EXPR_META_KEY)), u32(x, NFTNL_EXPR_META_DREG));
            case "cmp" -> new Cmp(u32(x, NFTNL_EXPR_CMP_SREG), CmpOp.of(u32(x, NFTNL_EXPR_CMP_OP)),
                    data(arena, x, NFTNL_EXPR_CMP_DATA));
            case "bitwise" -> new Bitwise(u32(x, NFTNL_EXPR_BITWISE_SREG), u32(x, NFTNL_EXPR_BITWISE_DREG),
                    data(arena, x, NFTNL_EXPR_BITWISE_MASK), data(arena, x, NFTNL_EXPR_BITWISE_XOR));
            case "range" -> new Range(u32(x, NFTNL_EXPR_RANGE_SREG), CmpOp.of(u32(x, NFTNL_EXPR_RANGE_OP)),
                    data(arena, x, NFTNL_EXPR_RANGE_FROM_DATA), data(arena, x, NFTNL_EXPR_RANGE_TO_DATA));
            case "lookup" -> new Lookup(u32(x, NFTNL_EXPR_LOOKUP_SREG),
                    Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_LOOKUP_SET)),
                    isSet(x, NFTNL_EXPR_LOOKUP_DREG) ? u32(x, NFTNL_EXPR_LOOKUP_DREG) : null,
                    isSet(x, NFTNL_EXPR_LOOKUP_FLAGS)
                            && (u32(x, NFTNL_EXPR_LOOKUP_FLAGS) & dev.gatun.bindings.internal.kernel_h.NFT_LOOKUP_F_INV) != 0);
            case "immediate" -> {
                int dreg = u32(x, NFTNL_EXPR_IMM_DREG);
                if (dreg == dev.gatun.nft.expr.Registers.VERDICT) {
                    Verdict.Code code = Verdict.Code.of(u32(x, NFTNL_EXPR_IMM_VERDICT));
                    String chain = isSet(x, NFTNL_EXPR_IMM_CHAIN)
                            ? Native.string(nftnl_expr_get_str(x, (short) NFTNL_EXPR_IMM_CHAIN)) : null;
                    yield new VerdictExpr(new Verdict(code, chain));
                }
                yield new Immediate(dreg, data(arena, x, NFTNL_EXPR_IMM_DATA));
            }
            case "nat" -> new Nat(Nat.Type.of(u32(x, NFTNL_EXPR_NAT_TYPE)), Family.of(u32(x, NFTNL_EXPR_NAT_FAMILY)),
                    optional(x, NFTNL_EXPR_NAT_REG_ADDR_MIN), optional(x, NFTNL_EXPR_NAT_REG_ADDR_MAX),
                    optional(x, NFTNL_EXPR_NAT_REG_PROTO_MIN), optional(x, NFTNL_EXPR_NAT_REG_PROTO_MAX),
                    optional(x, NFTNL_EXPR_NAT_FLAGS));
            case "masq" -> new Masquerade(optional(x, NFTNL_EXPR_MASQ_FLAGS), optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MIN),
                    optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MAX));
            case "redir" -> new Redirect(optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MIN),
                    optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MAX), optional(x, NFTNL_EXPR_REDIR_FLAGS));
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
            default -> throw new UnsupportedExpressionException(kind);
        };
    }

    /** A rule uses an expression gatun does not model; read-back names it instead of guessing. */
    static final class UnsupportedExpressionException extends dev.gatun.GatunException {
        UnsupportedExpressionException(String kind) {
            super("the ruleset uses the nftables expression '" + kind + "', which gatun does not decode");
        }
    }

    private static void u32(MemorySegment x, int attr, int value) {
        nftnl_expr_set_u32(x, (short) attr, value);
    }

    private static void optional(MemorySegment x, int attr, int value) {
        if (value != 0) {
            u32(x, attr, value);
        }
    }

    private static int u32(MemorySegment x, int attr) {
        return nftnl_expr_get_u32(x, (short) attr);
    }

    private static int optional(MemorySegment x, int attr) {
        return isSet(x, attr) ? u32(x, attr) : 0;
    }

    private static boolean isSet(MemorySegment x, int attr) {
        return nftnl_expr_is_set(x, (short) attr) != 0;
    }

    private static void data(Arena arena, MemorySegment x, int attr, Bytes b) {
        nftnl_expr_set(x, (short) attr, Native.bytes(arena, b.raw()), b.length());
    }

    private static Bytes data(Arena arena, MemorySegment x, int attr) {
        byte[] b = Native.data(arena, len -> nftnl_expr_get(x, (short) attr, len));
        return Bytes.wrap(b == null ? new byte[0] : b);
    }
}
