package dev.gatun.nft;

import dev.gatun.nft.value.Bytes;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** Rule messages without a kernel: what gatun would send, parsed back, and netlink attributes by hand. */
final class RuleMessages {

    private RuleMessages() {}

    /** The NEWRULE message gatun sends for {@code rule}. */
    static byte[] encode(Rule rule) {
        return new Transaction(null).add(rule).encode().getFirst();
    }

    /** {@code rule} written into its message, and read back from it through libnftnl. */
    static Rule readBack(Rule rule) {
        byte[] message = encode(rule);
        try (Arena arena = Arena.ofConfined()) {
            return RuleCodec.read(arena.allocateFrom(JAVA_BYTE, message));
        }
    }

    static byte[] bigEndian(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    /** One netlink attribute, padded: length and type in host order, then the payload. */
    static byte[] attribute(int type, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(NetlinkMessages.align(4 + payload.length)).order(ByteOrder.nativeOrder());
        b.putShort((short) (4 + payload.length)).putShort((short) type).put(payload);
        return b.array();
    }

    static byte[] nested(int type, byte[]... children) {
        byte[] a = attribute(type, attributes(children).toArray());
        ByteBuffer.wrap(a).order(ByteOrder.nativeOrder()).putShort(2, (short) (type | kernel_h.NLA_F_NESTED));
        return a;
    }

    static Bytes attributes(byte[]... each) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] a : each) {
            out.writeBytes(a);
        }
        return Bytes.of(out.toByteArray());
    }
}
