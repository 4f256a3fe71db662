package dev.gatun.nft;

/**
 * An element as the kernel keeps it: the key's bytes and, in a map, the data's bytes, each laid
 * out by {@link Concatenation}, and an optional comment. For callers that hold values rather
 * than nft's words: nothing is parsed or rendered on the way. Not for interval sets, whose
 * elements are pairs (use {@link Element}). The arrays are not copied.
 */
public record StoredElement(byte[] key, byte[] data, String comment) {

    public static StoredElement key(byte[] key) {
        return new StoredElement(key, null, null);
    }
}
