package dev.gatun.nft.expr;

/** Destination NAT to the local machine, to the port in register {@code protoMin} (0: unchanged). */
public record Redirect(int protoMin, int protoMax, int flags) implements Expr {
    @Override
    public String kind() {
        return "redir";
    }
}
