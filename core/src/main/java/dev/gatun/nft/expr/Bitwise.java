package dev.gatun.nft.expr;

import dev.gatun.nft.value.Bytes;

/**
 * {@code dreg = (sreg & mask) ^ xor}, over {@code mask.length()} bytes. {@code explicitOp}: the
 * message names the operation (NFTA_BITWISE_OP, the mask-and-xor one), as nft does for a bitwise
 * it writes from {@code & | ^} in a rule and not for the flag tests and prefixes it makes by
 * itself. The kernel runs both alike and lists the operation always.
 */
public record Bitwise(int sreg, int dreg, Bytes mask, Bytes xor, boolean explicitOp) implements Expr {

    /** Without the operation named, as nft writes ct state flags and address prefixes. */
    public Bitwise(int sreg, int dreg, Bytes mask, Bytes xor) {
        this(sreg, dreg, mask, xor, false);
    }

    @Override
    public String kind() {
        return "bitwise";
    }
}
