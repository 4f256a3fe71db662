package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.nft.expr.Expr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

import dev.gatun.bindings.internal.kernel_h;

import static dev.gatun.bindings.internal.libmnl_h.*;
import static dev.gatun.bindings.internal.libnftnl_h.*;

/** Rule messages through libnftnl; the expressions go through {@link ExprEncoder} and {@link ExprDecoder}. */
final class RuleCodec {

    private RuleCodec() {}

    /** Writes a NEWRULE payload, or with {@code handleOnly} the DELRULE payload for the rule's handle. */
    static void write(MemorySegment nlh, Rule rule, boolean handleOnly) {
        write(nlh, rule, handleOnly, name -> 0);
    }

    /**
     * {@code newSetIds} gives the transaction id of a set created in the same batch (0 for an
     * existing one), which lookups carry as nft does.
     */
    static void write(MemorySegment nlh, Rule rule, boolean handleOnly, ToIntFunction<String> newSetIds) {
        MemorySegment r = nftnl_rule_alloc();
        try (Arena arena = Arena.ofConfined()) {
            nftnl_rule_set_str(r, (short) NFTNL_RULE_TABLE, arena.allocateFrom(rule.table()));
            nftnl_rule_set_str(r, (short) NFTNL_RULE_CHAIN, arena.allocateFrom(rule.chain()));
            if (handleOnly) {
                nftnl_rule_set_u64(r, (short) NFTNL_RULE_HANDLE, rule.handle());
            } else {
                XtProtocol xt = XtProtocol.of(rule);
                if (xt != null) {
                    nftnl_rule_set_u32(r, (short) NFTNL_RULE_COMPAT_PROTO, xt.number());
                    nftnl_rule_set_u32(r, (short) NFTNL_RULE_COMPAT_FLAGS, xt.inverted() ? kernel_h.NFT_RULE_COMPAT_F_INV : 0);
                }
            }
            nftnl_rule_nlmsg_build_payload(nlh, r);
            if (!handleOnly && !rule.expressions().isEmpty()) {
                writeExpressions(nlh, arena, rule.expressions(), newSetIds);
            }
            if (!handleOnly && rule.comment() != null) {
                // nft puts the comment after the expressions; libnftnl would put it before.
                byte[] u = new Udata().putString(NFTNL_UDATA_RULE_COMMENT, rule.comment()).bytes();
                mnl_attr_put(nlh, (short) kernel_h.NFTA_RULE_USERDATA, u.length, Native.bytes(arena, u));
            }
        } finally {
            nftnl_rule_free(r);
        }
    }

    /**
     * The expression list, nested as libnftnl nests it; written here so that an opaque
     * expression can be copied in beside the ones libnftnl encodes.
     */
    private static void writeExpressions(MemorySegment nlh, Arena arena, List<Expr> exprs, ToIntFunction<String> newSetIds) {
        MemorySegment list = mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_RULE_EXPRESSIONS);
        for (Expr e : exprs) {
            MemorySegment element = mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_LIST_ELEM);
            ExprEncoder.write(nlh, arena, e, newSetIds);
            mnl_attr_nest_end(nlh, element);
        }
        mnl_attr_nest_end(nlh, list);
    }

    /** Where a rule notification belongs, without decoding its expressions. */
    static Rule readHeader(MemorySegment nlh) {
        MemorySegment r = nftnl_rule_alloc();
        try {
            NftReplyCheck.rule(nlh);
            if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a rule message");
            }
            return new Rule(Family.of(nftnl_rule_get_u32(r, (short) NFTNL_RULE_FAMILY)),
                    Native.string(nftnl_rule_get_str(r, (short) NFTNL_RULE_TABLE)),
                    Native.string(nftnl_rule_get_str(r, (short) NFTNL_RULE_CHAIN)), List.of(), null,
                    nftnl_rule_get_u64(r, (short) NFTNL_RULE_HANDLE));
        } finally {
            nftnl_rule_free(r);
        }
    }

    static Rule read(MemorySegment nlh) {
        MemorySegment r = nftnl_rule_alloc();
        try (Arena arena = Arena.ofConfined()) {
            NftReplyCheck.rule(nlh);
            if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a rule message");
            }
            List<Expr> exprs = new ArrayList<>();
            MemorySegment it = nftnl_expr_iter_create(r);
            try {
                for (MemorySegment x = nftnl_expr_iter_next(it); !x.equals(MemorySegment.NULL); x = nftnl_expr_iter_next(it)) {
                    exprs.add(ExprDecoder.fromNative(arena, x));
                }
            } finally {
                nftnl_expr_iter_destroy(it);
            }
            String comment = null;
            if (nftnl_rule_is_set(r, (short) NFTNL_RULE_USERDATA) != 0) {
                Map<Integer, byte[]> u = Udata.parse(Native.data(arena,
                        len -> nftnl_rule_get_data(r, (short) NFTNL_RULE_USERDATA, len)));
                if (u.containsKey(NFTNL_UDATA_RULE_COMMENT)) {
                    comment = Udata.string(u.get(NFTNL_UDATA_RULE_COMMENT));
                }
            }
            return new Rule(Family.of(nftnl_rule_get_u32(r, (short) NFTNL_RULE_FAMILY)),
                    Native.string(nftnl_rule_get_str(r, (short) NFTNL_RULE_TABLE)),
                    Native.string(nftnl_rule_get_str(r, (short) NFTNL_RULE_CHAIN)), exprs, comment,
                    nftnl_rule_get_u64(r, (short) NFTNL_RULE_HANDLE));
        } finally {
            nftnl_rule_free(r);
        }
    }
}
