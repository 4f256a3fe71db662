package dev.gatun.nft.expr;

import dev.gatun.nft.value.Bytes;

/** Compares register {@code sreg} with {@code data}; the rule stops here when it does not hold. */
public record Cmp(int sreg, CmpOp op, Bytes data) implements Expr {
    @Override
    public String kind() {
        return "cmp";
    }
}
