package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nft_userspace_h;
import dev.gatun.netlink.MalformedReplyException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/**
 * Set and map messages through libnftnl, with the type numbers and user data nft writes, so a
 * set gatun makes lists the same as one nft makes.
 */
final class SetCodec {

    private SetCodec() {}

    /** {@code transactionId} > 0 names a set created in the same batch, for its elements and rules. */
    static void write(MemorySegment nlh, NftSet set, int transactionId, boolean nameOnly) {
        MemorySegment s = nftnl_set_alloc();
        try (Arena arena = Arena.ofConfined()) {
            nftnl_set_set_str(s, (short) NFTNL_SET_TABLE, arena.allocateFrom(set.table()));
            nftnl_set_set_str(s, (short) NFTNL_SET_NAME, arena.allocateFrom(set.name()));
            if (!nameOnly) {
                int flags = SetFlag.bits(set.flags()) | (set.isMap() ? kernel_h.NFT_SET_MAP : 0);
                nftnl_set_set_u32(s, (short) NFTNL_SET_FLAGS, flags);
                nftnl_set_set_u32(s, (short) NFTNL_SET_KEY_TYPE, typeNumber(set.keyType()));
                nftnl_set_set_u32(s, (short) NFTNL_SET_KEY_LEN, set.keyLength());
                if (set.isMap()) {
                    nftnl_set_set_u32(s, (short) NFTNL_SET_DATA_TYPE,
                            set.isVerdictMap() ? kernel_h.NFT_DATA_VERDICT : typeNumber(set.dataType()));
                    nftnl_set_set_u32(s, (short) NFTNL_SET_DATA_LEN, set.dataLength());
                }
                if (transactionId > 0) {
                    nftnl_set_set_u32(s, (short) NFTNL_SET_ID, transactionId);
                }
                if (set.timeout() != null) {
                    nftnl_set_set_u64(s, (short) NFTNL_SET_TIMEOUT, set.timeout().toMillis());
                }
                byte[] u = userData(set);
                nftnl_set_set_data(s, (short) NFTNL_SET_USERDATA, Native.bytes(arena, u), u.length);
            }
            nftnl_set_nlmsg_build_payload(nlh, s);
        } finally {
            nftnl_set_free(s);
        }
    }

    /** nft's number for a type: concatenations pack each component's number into TYPE_BITS bits. */
    static int typeNumber(List<DataType> types) {
        int n = 0;
        for (DataType t : types) {
            n = (n << nft_userspace_h.NFT_USERSPACE_TYPE_BITS) | t.id;
        }
        return n;
    }

    static List<DataType> types(int number) {
        List<DataType> out = new ArrayList<>();
        int mask = (1 << nft_userspace_h.NFT_USERSPACE_TYPE_BITS) - 1;
        while (number != 0) {
            out.addFirst(DataType.ofId(number & mask));
            number >>>= nft_userspace_h.NFT_USERSPACE_TYPE_BITS;
        }
        return out;
    }

    /** The user data records nft writes for a set declared with {@code type}, in nft's order. */
    private static byte[] userData(NftSet set) {
        Udata u = new Udata();
        u.putU32(NFTNL_UDATA_SET_KEYBYTEORDER, byteOrder(set.keyType()));
        if (set.isMap()) {
            u.putU32(NFTNL_UDATA_SET_DATABYTEORDER, byteOrder(set.dataType()));
        }
        if (set.keyType().size() > 1) {
            u.put(NFTNL_UDATA_SET_KEY_TYPEOF, concatenationTypeof());
        }
        if (set.dataType().size() > 1) {
            u.put(NFTNL_UDATA_SET_DATA_TYPEOF, concatenationTypeof());
        }
        if (set.isMap()) {
            u.putU32(NFTNL_UDATA_SET_DATA_INTERVAL, 0);
        }
        if (set.comment() != null) {
            u.putString(NFTNL_UDATA_SET_COMMENT, set.comment());
        }
        return u.bytes();
    }

    private static int byteOrder(List<DataType> types) {
        return types.size() > 1 ? nft_userspace_h.NFT_USERSPACE_BYTEORDER_INVALID : types.getFirst().byteOrder;
    }

    /** What nft records for a concatenation declared by type: the expression kind, and no sub-expressions. */
    private static byte[] concatenationTypeof() {
        byte[] kind = new Udata().putU32(NFTNL_UDATA_SET_TYPEOF_EXPR, nft_userspace_h.NFT_USERSPACE_EXPR_CONCAT).bytes();
        byte[] out = new byte[kind.length + 2];
        System.arraycopy(kind, 0, out, 0, kind.length);
        out[kind.length] = (byte) NFTNL_UDATA_SET_TYPEOF_DATA;
        out[kind.length + 1] = 0;
        return out;
    }

    static NftSet read(MemorySegment nlh) {
        MemorySegment s = nftnl_set_alloc();
        try (Arena arena = Arena.ofConfined()) {
            NftReplyCheck.set(nlh);
            if (nftnl_set_nlmsg_parse(nlh, s) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a set message");
            }
            int flags = nftnl_set_get_u32(s, (short) NFTNL_SET_FLAGS);
            List<DataType> key = types(nftnl_set_get_u32(s, (short) NFTNL_SET_KEY_TYPE));
            List<DataType> data = List.of();
            if ((flags & kernel_h.NFT_SET_MAP) != 0) {
                int dataType = nftnl_set_get_u32(s, (short) NFTNL_SET_DATA_TYPE);
                data = dataType == kernel_h.NFT_DATA_VERDICT ? List.of(DataType.VERDICT) : types(dataType);
            }
            Duration timeout = nftnl_set_is_set(s, (short) NFTNL_SET_TIMEOUT) != 0
                    ? Duration.ofMillis(nftnl_set_get_u64(s, (short) NFTNL_SET_TIMEOUT)) : null;
            String comment = null;
            if (nftnl_set_is_set(s, (short) NFTNL_SET_USERDATA) != 0) {
                Map<Integer, byte[]> u = Udata.parse(Native.data(arena,
                        len -> nftnl_set_get_data(s, (short) NFTNL_SET_USERDATA, len)));
                if (u.containsKey(NFTNL_UDATA_SET_COMMENT)) {
                    comment = Udata.string(u.get(NFTNL_UDATA_SET_COMMENT));
                }
            }
            Set<SetFlag> setFlags = new HashSet<>(SetFlag.of(flags));
            return new NftSet(Family.of(nftnl_set_get_u32(s, (short) NFTNL_SET_FAMILY)),
                    Native.string(nftnl_set_get_str(s, (short) NFTNL_SET_TABLE)),
                    Native.string(nftnl_set_get_str(s, (short) NFTNL_SET_NAME)), key, data, setFlags, timeout, comment,
                    nftnl_set_get_u64(s, (short) NFTNL_SET_HANDLE));
        } finally {
            nftnl_set_free(s);
        }
    }

    /** Whether the kernel marks the set anonymous (made for one rule); gatun lists only named sets. */
    static boolean isAnonymous(MemorySegment nlh) {
        MemorySegment s = nftnl_set_alloc();
        try {
            NftReplyCheck.set(nlh);
            nftnl_set_nlmsg_parse(nlh, s);
            return (nftnl_set_get_u32(s, (short) NFTNL_SET_FLAGS) & kernel_h.NFT_SET_ANONYMOUS) != 0;
        } finally {
            nftnl_set_free(s);
        }
    }
}
