package dev.gatun.nft.expr;

/** A routing lookup: {@code flags} are NFTA_FIB_F_* bits, {@code result} NFT_FIB_RESULT_*. */
public record Fib(int flags, int result, int dreg) implements Expr {
    @Override
    public String kind() {
        return "fib";
    }
}
