package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;

import java.time.Duration;

/**
 * Adds or refreshes the key in register {@code sreg} as an element of a set from the packet
 * path ({@code add @set { key }}, {@code update @set { key }}). {@code timeout}: the element's
 * own, or null for the set's default. The set needs the dynamic flag.
 */
public record Dynset(Op op, int sreg, String set, Duration timeout) implements Expr {

    /** What it does with the key: add it once, or add it and refresh its timeout at every packet. */
    public enum Op {
        ADD("add", kernel_h.NFT_DYNSET_OP_ADD), UPDATE("update", kernel_h.NFT_DYNSET_OP_UPDATE);

        public final String keyword;
        public final int value;

        Op(String keyword, int value) {
            this.keyword = keyword;
            this.value = value;
        }

        /** The operation with this kernel value; IllegalArgumentException for one gatun has no name for (delete). */
        public static Op of(int value) {
            for (Op o : values()) {
                if (o.value == value) {
                    return o;
                }
            }
            throw new IllegalArgumentException("dynset operation " + value);
        }
    }

    @Override
    public String kind() {
        return "dynset";
    }
}
