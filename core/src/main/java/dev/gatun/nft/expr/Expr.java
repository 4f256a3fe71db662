package dev.gatun.nft.expr;

/**
 * One nf_tables expression, as the kernel runs it: loads into registers, comparisons,
 * lookups, and statements. Rules are lists of these; {@link dev.gatun.nft.RuleBuilder} writes
 * them the way nft would for the same line.
 */
public sealed interface Expr permits Payload, Meta, MetaSet, Cmp, Bitwise, Range, Lookup, Immediate, VerdictExpr, Nat,
        Masquerade, Redirect, Reject, Counter, Ct, Fib, Log, Dynset, Opaque {

    /** The kernel's expression name, as libnftnl allocates it. */
    String kind();
}
