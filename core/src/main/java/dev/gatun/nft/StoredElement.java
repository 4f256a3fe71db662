package dev.gatun.nft;

import dev.gatun.nft.expr.Counter;

/**
 * An element as the kernel keeps it: the key's bytes and, in a map, the data's bytes, each laid
 * out by {@link Concatenation}, and an optional comment. For callers that hold values rather
 * than nft's words: nothing is parsed or rendered on the way. Not for interval sets, whose
 * elements are pairs (use {@link Element}). The arrays are not copied. {@code counter}, when
 * there is one, holds the kernel's counts as read (null: the element has none).
 */
public record StoredElement(byte[] key, byte[] data, String comment, Counter counter) {

    /** An element without a counter of its own. */
    public StoredElement(byte[] key, byte[] data, String comment) {
        this(key, data, comment, null);
    }

    public static StoredElement key(byte[] key) {
        return new StoredElement(key, null, null);
    }

    /**
     * The same element carrying a counter (added with zero counts): every lookup that finds it,
     * a rule's or a dnat map's, counts the packet there.
     */
    public StoredElement counted() {
        return new StoredElement(key, data, comment, new Counter(0, 0));
    }
}
