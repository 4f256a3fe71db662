package dev.gatun.driver.bridge;

/**
 * nftables generation ids: a u32 the kernel increments by one with every transaction that
 * changes something, skipping 0 when it wraps. Compared as sequence numbers are, so that the
 * order holds across the wrap.
 */
final class Generations {

    private Generations() {}

    /** The generation a transaction committed at {@code g} makes. */
    static int next(int g) {
        return g + 1 == 0 ? 1 : g + 1;
    }

    /** Whether {@code a} came after {@code b}. */
    static boolean after(int a, int b) {
        return a - b > 0;
    }
}
