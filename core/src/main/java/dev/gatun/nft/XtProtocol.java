package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Opaque;

import java.util.List;

/**
 * The protocol an iptables-nft rule's xtables matches and targets are checked against when the
 * rule is added (NFTA_RULE_COMPAT): REJECT --reject-with tcp-reset needs tcp, multiport tcp or
 * udp. The kernel does not list it back with the rule. iptables-nft writes it from -p, which it
 * also writes as a {@code meta l4proto} match; gatun derives it from that match the same way,
 * so a rule read back can be added again.
 */
record XtProtocol(int number, boolean inverted) {

    /** For a rule of an iptables family with an xtables match or target; null otherwise or without a protocol match. */
    static XtProtocol of(Rule rule) {
        List<Expr> exprs = rule.expressions();
        boolean iptables = rule.family() == Family.IP || rule.family() == Family.IP6;
        if (!iptables || exprs.stream().noneMatch(e -> e instanceof Opaque o && o.isXtables())) {
            return null;
        }
        for (int i = 0; i + 1 < exprs.size(); i++) {
            if (exprs.get(i) instanceof Meta m && m.key() == Meta.Key.L4PROTO && exprs.get(i + 1) instanceof Cmp c
                    && c.sreg() == m.dreg() && c.data().length() == 1 && (c.op() == CmpOp.EQ || c.op() == CmpOp.NEQ)) {
                return new XtProtocol(c.data().get(0), c.op() == CmpOp.NEQ);
            }
        }
        return null;
    }
}
