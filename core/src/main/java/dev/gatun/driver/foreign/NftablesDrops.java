package dev.gatun.driver.foreign;

import dev.gatun.nft.value.Bytes;
import dev.gatun.nft.Chain;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Hook;
import dev.gatun.nft.Rule;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.value.Verdict;
import dev.gatun.nft.expr.Bitwise;
import dev.gatun.nft.expr.Cmp;
import dev.gatun.nft.expr.CmpOp;
import dev.gatun.nft.expr.Counter;
import dev.gatun.nft.expr.Expr;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Reject;
import dev.gatun.nft.expr.VerdictExpr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Forward chains of other nftables tables that drop. gatun never edits another table: its own
 * forward chain runs first and marks what it accepts ({@link AcceptMark}), and the user lets
 * that mark through with one rule, which this class prints and recognises once it is there.
 */
final class NftablesDrops {

    /** Tables of iptables-nft (handled through its binary) and of firewalld (through its zones). */
    private static final Set<String> XTABLES_NAMES = Set.of("filter", "mangle", "raw", "security", "nat");

    private NftablesDrops() {}

    static boolean isXtables(Chain c) {
        return (c.family() == Family.IP || c.family() == Family.IP6) && XTABLES_NAMES.contains(c.table())
                && c.name().equals(c.name().toUpperCase(Locale.ROOT));
    }

    /** firewalld's table, and the one it holds only while it reloads (firewalld_policy_drop). */
    static boolean isFirewalld(Chain c) {
        return c.family() == Family.INET && c.table().startsWith("firewalld");
    }

    /**
     * Every forward base chain outside gatun's table that drops, with whether gatun's mark gets
     * through it. {@code skip} says which chains another opener handles; {@code mark} 0 says
     * gatun marks nothing (its iptables driver).
     */
    static List<ForeignDrop> find(Ruleset now, String gatunTable, int gatunPriority, int mark,
                                  Predicate<Chain> skip) {
        List<ForeignDrop> out = new ArrayList<>();
        for (Chain c : now.chains()) {
            if (!c.isBase() || c.base().hook() != Hook.FORWARD || c.table().equals(gatunTable) || skip.test(c)) {
                continue;
            }
            List<Rule> rules = now.rulesOf(c);
            List<String> why = new ArrayList<>();
            if (c.base().policy() == Verdict.Code.DROP) {
                why.add("policy drop");
            }
            if (rules.stream().anyMatch(NftablesDrops::drops)) {
                why.add("a rule that drops");
            }
            if (why.isEmpty()) {
                continue;
            }
            String where = c.family().keyword() + " " + c.table() + " " + c.name();
            boolean accepts = rules.stream().anyMatch(r -> acceptsMark(r, mark));
            String action;
            if (mark == 0) {
                action = "gatun's iptables driver marks nothing; accept traffic into and out of gatun's bridges in this chain";
            } else if (c.base().priority() <= gatunPriority) {
                action = "it runs at priority " + c.base().priority() + ", before gatun's forward chain ("
                        + gatunPriority + "), so gatun's mark is not set there yet; give it a priority above "
                        + gatunPriority + " and add: " + AcceptMark.acceptRule(c.family().keyword(), c.table(), c.name(), mark);
            } else if (accepts) {
                action = "gatun's traffic (mark " + AcceptMark.hex(mark) + ") is accepted by a rule of its own";
            } else {
                action = "gatun cannot edit this table; add: "
                        + AcceptMark.acceptRule(c.family().keyword(), c.table(), c.name(), mark);
            }
            out.add(new ForeignDrop("nftables", where, String.join(", ", why), action,
                    accepts && mark != 0 && c.base().priority() > gatunPriority));
        }
        return out;
    }

    private static boolean drops(Rule r) {
        for (Expr e : r.expressions()) {
            if (e instanceof Reject || e instanceof VerdictExpr v && v.verdict().code() == Verdict.Code.DROP) {
                return true;
            }
        }
        return false;
    }

    /** {@code meta mark & M == M accept}, as nft writes it (a counter may stand anywhere). */
    static boolean acceptsMark(Rule r, int mark) {
        List<Expr> e = r.expressions().stream().filter(x -> !(x instanceof Counter)).toList();
        return e.size() == 4
                && e.get(0) instanceof Meta m && m.key() == Meta.Key.MARK
                && e.get(1) instanceof Bitwise b && b.mask().equals(hostInt(mark)) && b.xor().isZero()
                && e.get(2) instanceof Cmp c && c.op() == CmpOp.EQ && c.data().equals(hostInt(mark))
                && e.get(3) instanceof VerdictExpr v && v.verdict().code() == Verdict.Code.ACCEPT;
    }

    /** The mark is a u32 in host byte order, as the kernel keeps skb->mark. */
    private static Bytes hostInt(int value) {
        return Bytes.of(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }
}
