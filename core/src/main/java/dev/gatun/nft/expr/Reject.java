package dev.gatun.nft.expr;

/** Rejects the packet: {@code type} is NFT_REJECT_*, {@code code} the ICMP(x) code. */
public record Reject(int type, int code) implements Expr {
    @Override
    public String kind() {
        return "reject";
    }
}
