package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;

/** Loads packet metadata (protocol, interfaces, mark) into register {@code dreg}. */
public record Meta(Key key, int dreg) implements Expr {

    public enum Key {
        L4PROTO(kernel_h.NFT_META_L4PROTO, "l4proto"),
        NFPROTO(kernel_h.NFT_META_NFPROTO, "nfproto"),
        PROTOCOL(kernel_h.NFT_META_PROTOCOL, "protocol"),
        IIF(kernel_h.NFT_META_IIF, "iif"),
        OIF(kernel_h.NFT_META_OIF, "oif"),
        IIFNAME(kernel_h.NFT_META_IIFNAME, "iifname"),
        OIFNAME(kernel_h.NFT_META_OIFNAME, "oifname"),
        IIFTYPE(kernel_h.NFT_META_IIFTYPE, "iiftype"),
        OIFTYPE(kernel_h.NFT_META_OIFTYPE, "oiftype"),
        MARK(kernel_h.NFT_META_MARK, "mark");

        public final int value;
        public final String keyword;

        Key(int value, String keyword) {
            this.value = value;
            this.keyword = keyword;
        }

        public static Key of(int value) {
            return Constants.first(values(), k -> k.value == value)
                    .orElseThrow(() -> new IllegalArgumentException("meta key " + value + " is not one gatun knows"));
        }
    }

    @Override
    public String kind() {
        return "meta";
    }
}
