package dev.gatun.nft;

import java.util.Arrays;
import java.util.List;

/**
 * The bytes of a key or data of a set's types, as the kernel keeps them: one value alone in
 * its type's length; several concatenated, each padded to 32 bits.
 */
public final class Concatenation {

    private Concatenation() {}

    /** Joins {@code values}, one per type, each exactly its type's length. */
    public static byte[] of(List<DataType> types, byte[]... values) {
        if (values.length != types.size()) {
            throw new IllegalArgumentException(values.length + " values for the " + types.size() + " types " + types);
        }
        byte[] out = new byte[NftSet.length(types)];
        int at = 0;
        for (int i = 0; i < values.length; i++) {
            DataType t = types.get(i);
            if (values[i].length != t.length) {
                throw new IllegalArgumentException("a " + t.keyword + " value is " + t.length + " bytes, not "
                        + values[i].length);
            }
            System.arraycopy(values[i], 0, out, at, t.length);
            at += types.size() == 1 ? t.length : NftSet.padded(t.length);
        }
        return out;
    }

    /** The values of {@code bytes}, one per type, without padding. */
    public static byte[][] split(List<DataType> types, byte[] bytes) {
        if (bytes.length != NftSet.length(types)) {
            throw new IllegalArgumentException(bytes.length + " bytes are not a value of " + types);
        }
        byte[][] out = new byte[types.size()][];
        int at = 0;
        for (int i = 0; i < out.length; i++) {
            DataType t = types.get(i);
            out[i] = Arrays.copyOfRange(bytes, at, at + t.length);
            at += types.size() == 1 ? t.length : NftSet.padded(t.length);
        }
        return out;
    }
}
