package dev.gatun.nft.expr;

import dev.gatun.nft.value.Bytes;

/** Whether register {@code sreg} lies (EQ) or does not lie (NEQ) between {@code from} and {@code to}. */
public record Range(int sreg, CmpOp op, Bytes from, Bytes to) implements Expr {
    @Override
    public String kind() {
        return "range";
    }
}
