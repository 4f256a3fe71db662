package dev.gatun.nft.expr;

/** Counts packets and bytes. Read back, it carries the kernel's counts. */
public record Counter(long packets, long bytes) implements Expr {
    @Override
    public String kind() {
        return "counter";
    }
}
