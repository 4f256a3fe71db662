package dev.gatun.nft.expr;

import dev.gatun.nft.Family;

/**
 * Source or destination NAT to the address in register {@code addrMin} (0: none) and the port in
 * {@code protoMin} (0: none); {@code flags} are NF_NAT_RANGE_* bits.
 */
public record Nat(Type type, Family family, int addrMin, int addrMax, int protoMin, int protoMax, int flags)
        implements Expr {

    public enum Type {
        SNAT(dev.gatun.bindings.internal.kernel_h.NFT_NAT_SNAT, "snat"),
        DNAT(dev.gatun.bindings.internal.kernel_h.NFT_NAT_DNAT, "dnat");

        public final int value;
        public final String keyword;

        Type(int value, String keyword) {
            this.value = value;
            this.keyword = keyword;
        }

        public static Type of(int value) {
            return value == SNAT.value ? SNAT : DNAT;
        }
    }

    @Override
    public String kind() {
        return "nat";
    }
}
