package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import java.util.function.Function;

/**
 * The operators nft writes after a value for a bitwise expression, {@code (value & mask) ^ xor},
 * as nft lists them: {@code & 0xffff0000}, {@code ^ 0x00000010}, {@code | 0x00002000} (bits set,
 * the others kept), {@code & 0xffff0003 | 0x00000003}. nft reads each back to the same mask and xor.
 */
final class BitwiseText {

    private BitwiseText() {}

    static String of(Bytes mask, Bytes xor, Function<Bytes, String> text) {
        if (xor.isZero()) {
            return allOnes(mask) ? "" : " & " + text.apply(mask);
        }
        if (allOnes(mask)) {
            return " ^ " + text.apply(xor);
        }
        if (and(mask, xor).isZero()) {
            Bytes kept = or(mask, xor);
            return (allOnes(kept) ? "" : " & " + text.apply(kept)) + " | " + text.apply(xor);
        }
        return " & " + text.apply(mask) + " ^ " + text.apply(xor);
    }

    /** Whether the mask's set bits all come first, as in a network prefix. */
    static boolean isPrefix(Bytes mask) {
        boolean ended = false;
        for (int i = 0; i < mask.length() * 8; i++) {
            boolean set = (mask.get(i / 8) & (0x80 >>> (i % 8))) != 0;
            if (set && ended) {
                return false;
            }
            ended |= !set;
        }
        return true;
    }

    private static boolean allOnes(Bytes b) {
        for (int i = 0; i < b.length(); i++) {
            if (b.get(i) != 0xff) {
                return false;
            }
        }
        return true;
    }

    private static Bytes and(Bytes a, Bytes b) {
        byte[] out = new byte[a.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) (a.get(i) & b.get(i));
        }
        return Bytes.wrap(out);
    }

    private static Bytes or(Bytes a, Bytes b) {
        byte[] out = new byte[a.length()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) (a.get(i) | b.get(i));
        }
        return Bytes.wrap(out);
    }
}
