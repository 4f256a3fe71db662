package dev.gatun.testing;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libnftnl_h;
import dev.gatun.netlink.NftBatch;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Builds table and chain messages straight through libnftnl, for transport tests. */
public final class TestTables {

    private TestTables() {}

    public static void addTable(NftBatch batch, int family, String familyName, String name, int flags) {
        batch.add("add table " + familyName + " " + name, kernel_h.NFT_MSG_NEWTABLE, family, flags, nlh -> {
            MemorySegment t = libnftnl_h.nftnl_table_alloc();
            try (Arena a = Arena.ofConfined()) {
                libnftnl_h.nftnl_table_set_str(t, (short) libnftnl_h.NFTNL_TABLE_NAME, a.allocateFrom(name));
                libnftnl_h.nftnl_table_set_u32(t, (short) libnftnl_h.NFTNL_TABLE_FAMILY, family);
                libnftnl_h.nftnl_table_nlmsg_build_payload(nlh, t);
            } finally {
                libnftnl_h.nftnl_table_free(t);
            }
        });
    }

    public static void addIpTable(NftBatch batch, String name) {
        addTable(batch, kernel_h.NFPROTO_IPV4, "ip", name, kernel_h.NLM_F_CREATE);
    }

    public static void addChain(NftBatch batch, int family, String familyName, String table, String chain) {
        batch.add("add chain " + familyName + " " + table + " " + chain, kernel_h.NFT_MSG_NEWCHAIN, family,
                kernel_h.NLM_F_CREATE, nlh -> {
                    MemorySegment c = libnftnl_h.nftnl_chain_alloc();
                    try (Arena a = Arena.ofConfined()) {
                        libnftnl_h.nftnl_chain_set_str(c, (short) libnftnl_h.NFTNL_CHAIN_TABLE, a.allocateFrom(table));
                        libnftnl_h.nftnl_chain_set_str(c, (short) libnftnl_h.NFTNL_CHAIN_NAME, a.allocateFrom(chain));
                        libnftnl_h.nftnl_chain_set_u32(c, (short) libnftnl_h.NFTNL_CHAIN_FAMILY, family);
                        libnftnl_h.nftnl_chain_nlmsg_build_payload(nlh, c);
                    } finally {
                        libnftnl_h.nftnl_chain_free(c);
                    }
                });
    }
}
