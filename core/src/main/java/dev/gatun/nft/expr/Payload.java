package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;

/** Loads {@code length} bytes at {@code offset} from a packet header into register {@code dreg}. */
public record Payload(Base base, int offset, int length, int dreg) implements Expr {

    public enum Base {
        LINK(kernel_h.NFT_PAYLOAD_LL_HEADER, "ll"),
        NETWORK(kernel_h.NFT_PAYLOAD_NETWORK_HEADER, "nh"),
        TRANSPORT(kernel_h.NFT_PAYLOAD_TRANSPORT_HEADER, "th");

        public final int value;
        public final String raw;

        Base(int value, String raw) {
            this.value = value;
            this.raw = raw;
        }

        public static Base of(int value) {
            return Constants.first(values(), b -> b.value == value)
                    .orElseThrow(() -> new IllegalArgumentException("payload base " + value));
        }
    }

    @Override
    public String kind() {
        return "payload";
    }
}
