package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;

/** Comparison operators of cmp and range. */
public enum CmpOp {
    EQ(kernel_h.NFT_CMP_EQ, "=="),
    NEQ(kernel_h.NFT_CMP_NEQ, "!="),
    LT(kernel_h.NFT_CMP_LT, "<"),
    LTE(kernel_h.NFT_CMP_LTE, "<="),
    GT(kernel_h.NFT_CMP_GT, ">"),
    GTE(kernel_h.NFT_CMP_GTE, ">=");

    public final int value;
    public final String symbol;

    CmpOp(int value, String symbol) {
        this.value = value;
        this.symbol = symbol;
    }

    public static CmpOp of(int value) {
        return Constants.first(values(), o -> o.value == value)
                .orElseThrow(() -> new IllegalArgumentException("cmp op " + value));
    }
}
