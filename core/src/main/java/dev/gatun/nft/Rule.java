package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.expr.Expr;

import java.util.List;
import java.util.Objects;

/** A rule: its expressions in order, a comment, and the handle the kernel gave it (0 until then). */
public record Rule(Family family, String table, String chain, List<Expr> expressions, String comment, long handle) {

    public Rule {
        Objects.requireNonNull(family, "family");
        NftNames.check("table", table);
        NftNames.check("chain", chain);
        expressions = List.copyOf(expressions);
        NftNames.checkComment("rule in chain " + chain, comment);
    }

    /** Starts a rule for a chain, written the way nft reads (see {@link RuleBuilder}). */
    public static RuleBuilder in(Chain chain) {
        return new RuleBuilder(chain.family(), chain.table(), chain.name());
    }

    public static RuleBuilder in(Table table, String chain) {
        return new RuleBuilder(table.family(), table.name(), chain);
    }

    public Rule withoutHandle() {
        return new Rule(family, table, chain, expressions, comment, 0);
    }

    public String describe() {
        return "rule in chain " + family + " " + table + " " + chain;
    }
}
