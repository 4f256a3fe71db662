package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;

/** Loads a conntrack field into register {@code dreg}; {@code direction} (original 0, reply 1) or null. */
public record Ct(Key key, Integer direction, int dreg) implements Expr {

    public enum Key {
        STATE(kernel_h.NFT_CT_STATE, "state"),
        DIRECTION(kernel_h.NFT_CT_DIRECTION, "direction"),
        STATUS(kernel_h.NFT_CT_STATUS, "status"),
        MARK(kernel_h.NFT_CT_MARK, "mark"),
        /** With a direction: that direction's destination address (the original one is the address before DNAT). */
        DST_IP(kernel_h.NFT_CT_DST_IP, "ip daddr"),
        DST_IP6(kernel_h.NFT_CT_DST_IP6, "ip6 daddr"),
        /** With a direction: that direction's destination port. */
        PROTO_DST(kernel_h.NFT_CT_PROTO_DST, "proto-dst");

        public final int value;
        public final String keyword;

        Key(int value, String keyword) {
            this.value = value;
            this.keyword = keyword;
        }

        public static Key of(int value) {
            return Constants.first(values(), k -> k.value == value)
                    .orElseThrow(() -> new IllegalArgumentException("ct key " + value + " is not one gatun knows"));
        }
    }

    @Override
    public String kind() {
        return "ct";
    }
}
