package dev.gatun.nft.expr;

/** Sets packet metadata (the mark) to the value in register {@code sreg}: nft's {@code meta mark set ...}. */
public record MetaSet(Meta.Key key, int sreg) implements Expr {
    @Override
    public String kind() {
        return "meta";
    }
}
