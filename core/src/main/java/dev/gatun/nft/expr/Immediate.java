package dev.gatun.nft.expr;

import dev.gatun.nft.value.Bytes;

/** Loads constant {@code data} into register {@code dreg}. */
public record Immediate(int dreg, Bytes data) implements Expr {
    @Override
    public String kind() {
        return "immediate";
    }
}
