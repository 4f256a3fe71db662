package dev.gatun.nft.expr;

/** Logs the packet: to the kernel log at {@code level}, or to nflog {@code group}; null for unset. */
public record Log(String prefix, Integer level, Integer group) implements Expr {
    @Override
    public String kind() {
        return "log";
    }
}
