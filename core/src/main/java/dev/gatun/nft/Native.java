package dev.gatun.nft;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** Small conversions between Java values and the C memory libnftnl hands out. */
final class Native {

    private Native() {}

    static String string(MemorySegment cString) {
        return cString.equals(MemorySegment.NULL) ? null : cString.reinterpret(Integer.MAX_VALUE).getString(0);
    }

    /** The int whose bytes in memory are {@code value} in network (big-endian) order, for mnl_attr_put_u32. */
    static int bigEndian(int value) {
        return ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? value : Integer.reverseBytes(value);
    }

    static MemorySegment bytes(Arena arena, byte[] data) {
        return arena.allocateFrom(JAVA_BYTE, data);
    }

    /** Calls a libnftnl getter of the form {@code get(obj, attr, uint32_t *len)} and copies the bytes. */
    static byte[] data(Arena arena, DataGetter getter) {
        MemorySegment len = arena.allocate(JAVA_INT);
        MemorySegment p = getter.get(len);
        if (p.equals(MemorySegment.NULL)) {
            return null;
        }
        int n = len.get(JAVA_INT, 0);
        return p.reinterpret(n).toArray(JAVA_BYTE);
    }

    @FunctionalInterface
    interface DataGetter {
        MemorySegment get(MemorySegment lengthOut);
    }
}
