package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;

/** Register numbers as nft uses them: 16-byte registers 1-4, and 4-byte registers from 8. */
public final class Registers {

    public static final int VERDICT = kernel_h.NFT_REG_VERDICT;
    public static final int REG1 = kernel_h.NFT_REG_1;
    public static final int REG2 = kernel_h.NFT_REG_2;
    /** A 16-byte register is four 4-byte ones: register 1 is 4-byte registers 8 to 11. */
    public static final int FIRST_32 = kernel_h.NFT_REG32_00;
    public static final int BYTES_32 = kernel_h.NFT_REG32_SIZE;

    private Registers() {}

    /** The 4-byte register {@code words} words after the start of 16-byte register 1 (reg 1 itself for 0). */
    public static int after(int words) {
        return words == 0 ? REG1 : FIRST_32 + words;
    }
}
