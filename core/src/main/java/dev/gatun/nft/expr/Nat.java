package dev.gatun.nft.expr;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.nft.value.Family;

import java.util.Set;

/**
 * Source or destination NAT to the address in register {@code addrMin} (0: none) and the port in
 * {@code protoMin} (0: none).
 */
public record Nat(Type type, Family family, int addrMin, int addrMax, int protoMin, int protoMax, Set<NatFlag> flags)
        implements Expr {

    public Nat {
        flags = NatFlag.copyOf(flags);
    }

    public enum Type {
        SNAT(kernel_h.NFT_NAT_SNAT, "snat"),
        DNAT(kernel_h.NFT_NAT_DNAT, "dnat");

        public final int value;
        public final String keyword;

        Type(int value, String keyword) {
            this.value = value;
            this.keyword = keyword;
        }

        /** The type the kernel calls {@code value}; any other is refused, so that the decoder keeps the expression opaque. */
        public static Type of(int value) {
            for (Type t : values()) {
                if (t.value == value) {
                    return t;
                }
            }
            throw new IllegalArgumentException("nat type " + value + " has no name");
        }
    }

    @Override
    public String kind() {
        return "nat";
    }
}
