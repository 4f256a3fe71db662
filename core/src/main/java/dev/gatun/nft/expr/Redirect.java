package dev.gatun.nft.expr;

import java.util.Set;

/** Destination NAT to the local machine, to the port in register {@code protoMin} (0: unchanged). */
public record Redirect(int protoMin, int protoMax, Set<NatFlag> flags) implements Expr {

    public Redirect {
        flags = NatFlag.copyOf(flags);
    }

    @Override
    public String kind() {
        return "redir";
    }
}
