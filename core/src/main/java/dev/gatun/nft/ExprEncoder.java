package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Fib;
import dev.gatun.nft.expr.Immediate;
import dev.gatun.nft.expr.Log;
import dev.gatun.nft.expr.Dynset;
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
import java.util.function.ToIntFunction;

import static dev.gatun.bindings.internal.libmnl_h.mnl_attr_nest_end;
import static dev.gatun.bindings.internal.libmnl_h.mnl_attr_nest_start;
import static dev.gatun.bindings.internal.libnftnl_h.*;
import static dev.gatun.nft.ExprAttributes.data;
import static dev.gatun.nft.ExprAttributes.optional;
import static dev.gatun.nft.ExprAttributes.u32;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Expressions into the attributes of a rule message: modelled kinds through libnftnl
 * expression objects, attribute by attribute, with a pattern switch over the sealed type, so
 * a new kind of expression without an encoder does not compile. {@link ExprDecoder} reads them back.
 */
final class ExprEncoder {

    private ExprEncoder() {}

    /**
     * Appends {@code e} to a rule message as one element of its expression list would hold it
     * (NFTA_EXPR_NAME, NFTA_EXPR_DATA). An opaque expression's attributes are copied as they
     * were read; libnftnl would have to parse them first, and it ends the process on an
     * attribute of the wrong size.
     */
    static void write(MemorySegment nlh, Arena arena, Expr e, ToIntFunction<String> newSetIds) {
        if (e instanceof Opaque o) {
            NetlinkMessages.appendString(nlh, kernel_h.NFTA_EXPR_NAME, o.kind());
            MemorySegment nest = mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_EXPR_DATA);
            byte[] data = o.data().raw();
            MemorySegment.copy(data, 0, NetlinkMessages.append(nlh, data.length), JAVA_BYTE, 0, data.length);
            mnl_attr_nest_end(nlh, nest);
            return;
        }
        MemorySegment x = nftnl_expr_alloc(arena.allocateFrom(e.kind()));
        try {
            setAttributes(arena, x, e, newSetIds);
            nftnl_expr_build_payload(nlh, x);
        } finally {
            nftnl_expr_free(x);
        }
    }

    /** Sets the attributes of {@code e} on the libnftnl expression {@code x}. */
    private static void setAttributes(Arena arena, MemorySegment x, Expr e, ToIntFunction<String> newSetIds) {
        switch (e) {
            case Opaque o -> throw new IllegalStateException("an opaque " + o.kind() + " expression is copied, not set");
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
            case MetaSet m -> {
                u32(x, NFTNL_EXPR_META_KEY, m.key().value);
                u32(x, NFTNL_EXPR_META_SREG, m.sreg());
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
                if (b.explicitOp()) {
                    u32(x, NFTNL_EXPR_BITWISE_OP, kernel_h.NFT_BITWISE_BOOL);
                }
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
                    u32(x, NFTNL_EXPR_LOOKUP_FLAGS, kernel_h.NFT_LOOKUP_F_INV);
                }
            }
            case Dynset d -> {
                u32(x, NFTNL_EXPR_DYNSET_SREG_KEY, d.sreg());
                u32(x, NFTNL_EXPR_DYNSET_OP, d.op().value);
                nftnl_expr_set_str(x, (short) NFTNL_EXPR_DYNSET_SET_NAME, arena.allocateFrom(d.set()));
                int setId = newSetIds.applyAsInt(d.set());
                if (setId > 0) {
                    u32(x, NFTNL_EXPR_DYNSET_SET_ID, setId);
                }
                if (d.timeout() != null) {
                    nftnl_expr_set_u64(x, (short) NFTNL_EXPR_DYNSET_TIMEOUT, d.timeout().toMillis());
                }
            }
            case Immediate i -> {
                u32(x, NFTNL_EXPR_IMM_DREG, i.dreg());
                data(arena, x, NFTNL_EXPR_IMM_DATA, i.data());
            }
            case VerdictExpr v -> {
                u32(x, NFTNL_EXPR_IMM_DREG, Registers.VERDICT);
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
                optional(x, NFTNL_EXPR_NAT_FLAGS, NatFlag.bits(n.flags()));
            }
            case Masquerade m -> {
                optional(x, NFTNL_EXPR_MASQ_FLAGS, NatFlag.bits(m.flags()));
                optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MIN, m.protoMin());
                optional(x, NFTNL_EXPR_MASQ_REG_PROTO_MAX, m.protoMax());
            }
            case Redirect r -> {
                optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MIN, r.protoMin());
                optional(x, NFTNL_EXPR_REDIR_REG_PROTO_MAX, r.protoMax());
                optional(x, NFTNL_EXPR_REDIR_FLAGS, NatFlag.bits(r.flags()));
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
    }
}
