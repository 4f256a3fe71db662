package dev.gatun.netlink;

import dev.gatun.bindings.internal.ifaddrmsg;
import dev.gatun.bindings.internal.ifinfomsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.rtmsg;

/**
 * How the requests gatun sends are laid out after their netlink header: the family header's
 * size and the attribute enum that follows it, with the enums nested inside. What names the
 * attribute the kernel rejected.
 */
final class RequestLayouts {

    /** A request's family header size and its top-level attribute enum (null where gatun knows no names). */
    record Layout(long headerBytes, AttributeSpace attributes) {}

    private RequestLayouts() {}

    /** The layout of a request of {@code messageType} in {@code protocol}, or null when gatun does not know it. */
    static Layout of(NetlinkProtocol protocol, int messageType) {
        return switch (protocol) {
            case NETFILTER -> new Layout(nfgenmsg.sizeof(), netfilter(messageType));
            case ROUTE -> route(messageType);
            case SOCK_DIAG -> null;
        };
    }

    private static AttributeSpace netfilter(int messageType) {
        if (messageType == kernel_h.NFNL_MSG_BATCH_BEGIN) {
            return AttributeSpace.of("NFNL_BATCH_");
        }
        int subsystem = messageType >> 8;
        if (subsystem == kernel_h.NFNL_SUBSYS_CTNETLINK) {
            return AttributeSpace.of("CTA_");
        }
        if (subsystem != kernel_h.NFNL_SUBSYS_NFTABLES) {
            return null;
        }
        return switch (messageType & 0xff) {
            case kernel_h.NFT_MSG_NEWTABLE, kernel_h.NFT_MSG_GETTABLE, kernel_h.NFT_MSG_DELTABLE -> AttributeSpace.of("NFTA_TABLE_");
            case kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NFT_MSG_GETCHAIN, kernel_h.NFT_MSG_DELCHAIN -> chain();
            case kernel_h.NFT_MSG_NEWRULE, kernel_h.NFT_MSG_GETRULE, kernel_h.NFT_MSG_DELRULE -> rule();
            case kernel_h.NFT_MSG_NEWSET, kernel_h.NFT_MSG_GETSET, kernel_h.NFT_MSG_DELSET -> set();
            case kernel_h.NFT_MSG_NEWSETELEM, kernel_h.NFT_MSG_GETSETELEM, kernel_h.NFT_MSG_DELSETELEM -> elementList();
            case kernel_h.NFT_MSG_NEWOBJ, kernel_h.NFT_MSG_GETOBJ, kernel_h.NFT_MSG_DELOBJ -> AttributeSpace.of("NFTA_OBJ_");
            case kernel_h.NFT_MSG_NEWFLOWTABLE, kernel_h.NFT_MSG_GETFLOWTABLE, kernel_h.NFT_MSG_DELFLOWTABLE ->
                    AttributeSpace.of("NFTA_FLOWTABLE_").nest(kernel_h.NFTA_FLOWTABLE_HOOK, () -> AttributeSpace.of("NFTA_FLOWTABLE_HOOK_"));
            case kernel_h.NFT_MSG_GETGEN -> AttributeSpace.of("NFTA_GEN_");
            default -> null;
        };
    }

    private static AttributeSpace chain() {
        return AttributeSpace.of("NFTA_CHAIN_").nest(kernel_h.NFTA_CHAIN_HOOK, () -> AttributeSpace.of("NFTA_HOOK_"));
    }

    private static AttributeSpace rule() {
        return AttributeSpace.of("NFTA_RULE_")
                .nest(kernel_h.NFTA_RULE_EXPRESSIONS, () -> AttributeSpace.listOf(() -> AttributeSpace.of("NFTA_EXPR_")));
    }

    private static AttributeSpace set() {
        return AttributeSpace.of("NFTA_SET_")
                .nest(kernel_h.NFTA_SET_DESC, () -> AttributeSpace.of("NFTA_SET_DESC_")
                        .nest(kernel_h.NFTA_SET_DESC_CONCAT, () -> AttributeSpace.listOf(() -> AttributeSpace.of("NFTA_SET_FIELD_"))));
    }

    private static AttributeSpace elementList() {
        return AttributeSpace.of("NFTA_SET_ELEM_LIST_")
                .nest(kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS, () -> AttributeSpace.listOf(RequestLayouts::element));
    }

    private static AttributeSpace element() {
        return AttributeSpace.of("NFTA_SET_ELEM_")
                .nest(kernel_h.NFTA_SET_ELEM_KEY, RequestLayouts::data)
                .nest(kernel_h.NFTA_SET_ELEM_KEY_END, RequestLayouts::data)
                .nest(kernel_h.NFTA_SET_ELEM_DATA, RequestLayouts::data);
    }

    private static AttributeSpace data() {
        return AttributeSpace.of("NFTA_DATA_").nest(kernel_h.NFTA_DATA_VERDICT, () -> AttributeSpace.of("NFTA_VERDICT_"));
    }

    private static Layout route(int messageType) {
        return switch (messageType) {
            case kernel_h.RTM_NEWLINK, kernel_h.RTM_DELLINK, kernel_h.RTM_GETLINK -> new Layout(ifinfomsg.sizeof(),
                    AttributeSpace.of("IFLA_", "IFLA_BRIDGE_", "IFLA_EVENT_")
                            .nest(kernel_h.IFLA_LINKINFO, () -> AttributeSpace.of("IFLA_INFO_")));
            case kernel_h.RTM_NEWADDR, kernel_h.RTM_DELADDR, kernel_h.RTM_GETADDR ->
                    new Layout(ifaddrmsg.sizeof(), AttributeSpace.of("IFA_", "IFA_F_"));
            case kernel_h.RTM_NEWROUTE, kernel_h.RTM_DELROUTE, kernel_h.RTM_GETROUTE ->
                    new Layout(rtmsg.sizeof(), AttributeSpace.of("RTA_"));
            default -> null;
        };
    }
}
