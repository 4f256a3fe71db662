package dev.gatun.nft;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * nftables user data: a run of records of one type byte, one length byte and the value, the
 * format libnftnl's nftnl_udata writes. Comments and set descriptions live here.
 */
final class Udata {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Udata putString(int type, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[b.length + 1];
        System.arraycopy(b, 0, z, 0, b.length);
        return put(type, z);
    }

    /** A u32 in host byte order, as nftnl_udata_put_u32 stores it. */
    Udata putU32(int type, int value) {
        return put(type, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }

    Udata put(int type, byte[] value) {
        if (value.length > 255) {
            throw new IllegalArgumentException("user data record of " + value.length + " bytes");
        }
        out.write(type);
        out.write(value.length);
        out.writeBytes(value);
        return this;
    }

    boolean isEmpty() {
        return out.size() == 0;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    /** The records of a user-data blob by type (the last one wins); malformed tails are ignored. */
    static Map<Integer, byte[]> parse(byte[] data) {
        Map<Integer, byte[]> m = new LinkedHashMap<>();
        int i = 0;
        while (i + 2 <= data.length) {
            int type = data[i] & 0xff;
            int len = data[i + 1] & 0xff;
            if (i + 2 + len > data.length) {
                break;
            }
            byte[] v = new byte[len];
            System.arraycopy(data, i + 2, v, 0, len);
            m.put(type, v);
            i += 2 + len;
        }
        return m;
    }

    static String string(byte[] value) {
        int n = 0;
        while (n < value.length && value[n] != 0) {
            n++;
        }
        return new String(value, 0, n, StandardCharsets.UTF_8);
    }

    static int u32(byte[] value) {
        return ByteBuffer.wrap(value).order(ByteOrder.nativeOrder()).getInt();
    }
}
