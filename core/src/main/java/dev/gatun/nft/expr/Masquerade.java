package dev.gatun.nft.expr;

/** Source NAT to the outgoing interface's address; {@code flags} are NF_NAT_RANGE_* bits. */
public record Masquerade(int flags, int protoMin, int protoMax) implements Expr {
    @Override
    public String kind() {
        return "masq";
    }
}
