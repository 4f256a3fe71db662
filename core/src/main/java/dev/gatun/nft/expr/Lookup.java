package dev.gatun.nft.expr;

/**
 * Looks register {@code sreg} up in a set. With {@code dreg} set (a map) the element's data is
 * loaded there; dreg 0 (the verdict register) makes it a verdict map. {@code inverted} matches
 * when the key is absent.
 */
public record Lookup(int sreg, String set, Integer dreg, boolean inverted) implements Expr {
    @Override
    public String kind() {
        return "lookup";
    }
}
