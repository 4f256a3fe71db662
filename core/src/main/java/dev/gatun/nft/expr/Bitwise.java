package dev.gatun.nft.expr;

import dev.gatun.nft.Bytes;

/** {@code dreg = (sreg & mask) ^ xor}, over {@code mask.length()} bytes. */
public record Bitwise(int sreg, int dreg, Bytes mask, Bytes xor) implements Expr {
    @Override
    public String kind() {
        return "bitwise";
    }
}
