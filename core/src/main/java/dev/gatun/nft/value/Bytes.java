package dev.gatun.nft.value;

import java.util.Arrays;
import java.util.HexFormat;

/** An immutable run of bytes with value equality: register data, keys, masks. */
public final class Bytes {

    private final byte[] data;

    private Bytes(byte[] data) {
        this.data = data;
    }

    public static Bytes of(byte... data) {
        return new Bytes(data.clone());
    }

    /** Holds {@code data} itself, uncopied: for a caller that made the array and lets go of it (the codecs). */
    public static Bytes wrap(byte[] data) {
        return new Bytes(data);
    }

    public static Bytes zeros(int length) {
        return new Bytes(new byte[length]);
    }

    public byte[] toArray() {
        return data.clone();
    }

    /** The array itself, uncopied: for a reader that does not change it (the codecs). */
    public byte[] raw() {
        return data;
    }

    public int length() {
        return data.length;
    }

    public int get(int i) {
        return data[i] & 0xff;
    }

    public Bytes slice(int from, int to) {
        return new Bytes(Arrays.copyOfRange(data, from, to));
    }

    public boolean isZero() {
        for (byte b : data) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Bytes b && Arrays.equals(data, b.data);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(data);
    }

    @Override
    public String toString() {
        return "0x" + HexFormat.of().formatHex(data);
    }
}
