package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkMessages;

import java.lang.foreign.MemorySegment;

/** The handles the kernel gives new objects, read from the echo of their request (NLM_F_ECHO). */
final class EchoedHandles {

    private EchoedHandles() {}

    /** Whether a request of this type makes an object with a handle, so that an echo of it is worth asking for. */
    static boolean isEchoed(int type) {
        return type == kernel_h.NFT_MSG_NEWTABLE || type == kernel_h.NFT_MSG_NEWCHAIN
                || type == kernel_h.NFT_MSG_NEWSET || type == kernel_h.NFT_MSG_NEWRULE;
    }

    /** The handle in {@code message} if it is the echo of a request of {@code type}, else 0. */
    static long handle(int type, MemorySegment message) {
        // Other notifications (such as NEWGEN) share sequence numbers; libnftnl exits the
        // process on a message of the wrong kind, so only the echo of the request is parsed.
        if ((NetlinkMessages.type(message) & 0xff) != type) {
            return 0;
        }
        if (type == kernel_h.NFT_MSG_NEWTABLE) {
            return TableCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWCHAIN) {
            return ChainCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWSET) {
            return SetCodec.read(message).handle();
        }
        if (type == kernel_h.NFT_MSG_NEWRULE) {
            return RuleCodec.read(message).handle();
        }
        return 0;
    }
}
