package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/**
 * Attributes of a libnftnl expression object, set and read. An optional one is 0 when absent:
 * nft leaves a register, flags or a port of 0 out.
 */
final class ExprAttributes {

    private ExprAttributes() {}

    static void u32(MemorySegment x, int attr, int value) {
        nftnl_expr_set_u32(x, (short) attr, value);
    }

    static void optional(MemorySegment x, int attr, int value) {
        if (value != 0) {
            u32(x, attr, value);
        }
    }

    static int u32(MemorySegment x, int attr) {
        return nftnl_expr_get_u32(x, (short) attr);
    }

    static int optional(MemorySegment x, int attr) {
        return isSet(x, attr) ? u32(x, attr) : 0;
    }

    static boolean isSet(MemorySegment x, int attr) {
        return nftnl_expr_is_set(x, (short) attr) != 0;
    }

    static void data(Arena arena, MemorySegment x, int attr, Bytes b) {
        nftnl_expr_set(x, (short) attr, Native.bytes(arena, b.raw()), b.length());
    }

    static Bytes data(Arena arena, MemorySegment x, int attr) {
        byte[] b = Native.data(arena, len -> nftnl_expr_get(x, (short) attr, len));
        return Bytes.wrap(b == null ? new byte[0] : b);
    }
}
