package dev.gatun.nft.expr;

import java.util.Set;

/** Source NAT to the outgoing interface's address, to ports from register {@code protoMin} (0: unchanged). */
public record Masquerade(Set<NatFlag> flags, int protoMin, int protoMax) implements Expr {

    public Masquerade {
        flags = NatFlag.copyOf(flags);
    }

    @Override
    public String kind() {
        return "masq";
    }
}
