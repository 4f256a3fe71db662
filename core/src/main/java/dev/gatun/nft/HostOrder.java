package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Numbers in the host's byte order, both ways. The kernel keeps meta and ct values (marks,
 * interface indexes and types, ct state bits, fib results) in host order, unlike packet fields.
 */
final class HostOrder {

    private HostOrder() {}

    static Bytes int32(int value) {
        return Bytes.wrap(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }

    static Bytes int16(int value) {
        return Bytes.wrap(ByteBuffer.allocate(2).order(ByteOrder.nativeOrder()).putShort((short) value).array());
    }

    /** The first four bytes as a host-order int; shorter data reads as if padded with zeros. */
    static int int32(Bytes data) {
        return ByteBuffer.wrap(Arrays.copyOf(data.raw(), 4)).order(ByteOrder.nativeOrder()).getInt();
    }

    /** The first two bytes as a host-order short. */
    static int int16(Bytes data) {
        return ByteBuffer.wrap(data.raw()).order(ByteOrder.nativeOrder()).getShort();
    }
}
