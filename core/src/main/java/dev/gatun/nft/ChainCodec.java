package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.value.Verdict;
import dev.gatun.netlink.MalformedReplyException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;

import static dev.gatun.bindings.internal.libmnl_h.*;
import static dev.gatun.bindings.internal.libnftnl_h.*;

/** Chain messages through libnftnl. */
final class ChainCodec {

    private ChainCodec() {}

    /**
     * Writes the payload in nft's attribute order: table and name through libnftnl, then the
     * type, policy, hook and user data, as nft appends them.
     */
    static void write(MemorySegment nlh, Chain chain, boolean nameOnly) {
        MemorySegment c = nftnl_chain_alloc();
        try (Arena arena = Arena.ofConfined()) {
            nftnl_chain_set_str(c, (short) NFTNL_CHAIN_TABLE, arena.allocateFrom(chain.table()));
            nftnl_chain_set_str(c, (short) NFTNL_CHAIN_NAME, arena.allocateFrom(chain.name()));
            nftnl_chain_nlmsg_build_payload(nlh, c);
            if (nameOnly) {
                return;
            }
            Chain.Base base = chain.base();
            if (base != null) {
                NetlinkMessages.appendString(nlh, kernel_h.NFTA_CHAIN_TYPE, base.type().keyword);
                if (base.policy() != null) {
                    mnl_attr_put_u32(nlh, (short) kernel_h.NFTA_CHAIN_POLICY, Native.bigEndian(base.policy().value()));
                }
                MemorySegment hook = mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_CHAIN_HOOK);
                mnl_attr_put_u32(nlh, (short) kernel_h.NFTA_HOOK_HOOKNUM, Native.bigEndian(base.hook().number(chain.family())));
                mnl_attr_put_u32(nlh, (short) kernel_h.NFTA_HOOK_PRIORITY, Native.bigEndian(base.priority()));
                if (base.device() != null) {
                    NetlinkMessages.appendString(nlh, kernel_h.NFTA_HOOK_DEV, base.device());
                }
                mnl_attr_nest_end(nlh, hook);
            }
            if (chain.comment() != null) {
                byte[] u = new Udata().putString(NFTNL_UDATA_CHAIN_COMMENT, chain.comment()).bytes();
                mnl_attr_put(nlh, (short) kernel_h.NFTA_CHAIN_USERDATA, u.length, Native.bytes(arena, u));
            }
        } finally {
            nftnl_chain_free(c);
        }
    }

    static Chain read(MemorySegment nlh) {
        MemorySegment c = nftnl_chain_alloc();
        try (Arena arena = Arena.ofConfined()) {
            NftReplyCheck.chain(nlh);
            if (nftnl_chain_nlmsg_parse(nlh, c) < 0) {
                throw new MalformedReplyException("libnftnl could not parse a chain message");
            }
            Family family = Family.of(nftnl_chain_get_u32(c, (short) NFTNL_CHAIN_FAMILY));
            Chain.Base base = null;
            if (nftnl_chain_is_set(c, (short) NFTNL_CHAIN_HOOKNUM) != 0) {
                Verdict.Code policy = nftnl_chain_is_set(c, (short) NFTNL_CHAIN_POLICY) != 0
                        ? Verdict.Code.of(nftnl_chain_get_u32(c, (short) NFTNL_CHAIN_POLICY)) : null;
                String device = nftnl_chain_is_set(c, (short) NFTNL_CHAIN_DEV) != 0
                        ? Native.string(nftnl_chain_get_str(c, (short) NFTNL_CHAIN_DEV)) : null;
                base = new Chain.Base(ChainType.parse(Native.string(nftnl_chain_get_str(c, (short) NFTNL_CHAIN_TYPE))),
                        Hook.of(family, nftnl_chain_get_u32(c, (short) NFTNL_CHAIN_HOOKNUM)),
                        nftnl_chain_get_s32(c, (short) NFTNL_CHAIN_PRIO), policy, device);
            }
            String comment = null;
            if (nftnl_chain_is_set(c, (short) NFTNL_CHAIN_USERDATA) != 0) {
                Map<Integer, byte[]> u = Udata.parse(Native.data(arena,
                        len -> nftnl_chain_get_data(c, (short) NFTNL_CHAIN_USERDATA, len)));
                if (u.containsKey(NFTNL_UDATA_CHAIN_COMMENT)) {
                    comment = Udata.string(u.get(NFTNL_UDATA_CHAIN_COMMENT));
                }
            }
            return new Chain(family, Native.string(nftnl_chain_get_str(c, (short) NFTNL_CHAIN_TABLE)),
                    Native.string(nftnl_chain_get_str(c, (short) NFTNL_CHAIN_NAME)), base, comment,
                    nftnl_chain_get_u64(c, (short) NFTNL_CHAIN_HANDLE));
        } finally {
            nftnl_chain_free(c);
        }
    }
}
