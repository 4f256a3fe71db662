package dev.gatun.nft.expr;

import dev.gatun.nft.value.Verdict;

/** Ends the rule with a verdict (an immediate load into the verdict register). */
public record VerdictExpr(Verdict verdict) implements Expr {
    @Override
    public String kind() {
        return "immediate";
    }
}
