package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.netlink.MalformedReplyException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/** Table messages through libnftnl: the payload of NEWTABLE/DELTABLE, and a table from a dump. */
final class TableCodec {

    private TableCodec() {}

    /** Writes the payload; a delete needs only the name. */
    static void write(MemorySegment nlh, Table table, boolean nameOnly) {
        MemorySegment t = nftnl_table_alloc();
        try (Arena arena = Arena.ofConfined()) {
            nftnl_table_set_str(t, (short) NFTNL_TABLE_NAME, arena.allocateFrom(table.name()));
            if (!nameOnly) {
                nftnl_table_set_u32(t, (short) NFTNL_TABLE_FLAGS, TableFlag.bits(table.flags()));
                if (table.comment() != null) {
                    byte[] u = new Udata().putString(NFTNL_UDATA_TABLE_COMMENT, table.comment()).bytes();
                    nftnl_table_set_data(t, (short) NFTNL_TABLE_USERDATA, Native.bytes(arena, u), u.length);
                }
            }
            nftnl_table_nlmsg_build_payload(nlh, t);
        } finally {
            nftnl_table_free(t);
        }
    }

    static Table read(MemorySegment nlh) {
        MemorySegment t = nftnl_table_alloc();
        try (Arena arena = Arena.ofConfined()) {
            NftReplyCheck.table(nlh);
            if (nftnl_table_nlmsg_parse(nlh, t) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a table message");
            }
            String comment = null;
            if (nftnl_table_is_set(t, (short) NFTNL_TABLE_USERDATA) != 0) {
                byte[] u = Native.data(arena, len -> nftnl_table_get_data(t, (short) NFTNL_TABLE_USERDATA, len));
                Map<Integer, byte[]> records = Udata.parse(u);
                if (records.containsKey(NFTNL_UDATA_TABLE_COMMENT)) {
                    comment = Udata.string(records.get(NFTNL_UDATA_TABLE_COMMENT));
                }
            }
            return new Table(Family.of(nftnl_table_get_u32(t, (short) NFTNL_TABLE_FAMILY)),
                    Native.string(nftnl_table_get_str(t, (short) NFTNL_TABLE_NAME)),
                    TableFlag.of(nftnl_table_get_u32(t, (short) NFTNL_TABLE_FLAGS)), comment,
                    nftnl_table_get_u64(t, (short) NFTNL_TABLE_HANDLE));
        } finally {
            nftnl_table_free(t);
        }
    }
}
