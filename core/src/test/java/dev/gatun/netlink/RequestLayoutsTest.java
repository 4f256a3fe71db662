package dev.gatun.netlink;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Attribute names taken from the bindings by prefix land in the right enum, where nested enums
 * share the prefix and the numbers (NFTA_SET_KEY_LEN and NFTA_SET_ELEM_EXPIRATION are both 5).
 * The numbers are the kernel uAPI's, written here from its headers, not read from the bindings.
 */
class RequestLayoutsTest {

    private static final int NFTABLES = 10 << 8;

    private static AttributeSpace nft(int message) {
        return RequestLayouts.of(NetlinkProtocol.NETFILTER, NFTABLES | message).attributes();
    }

    private static AttributeSpace route(int message) {
        return RequestLayouts.of(NetlinkProtocol.ROUTE, message).attributes();
    }

    @Test
    void nftablesObjectsAndTheirNests() {
        assertThat(nft(9).name(5)).as("NEWSET").isEqualTo("NFTA_SET_KEY_LEN");
        assertThat(nft(12).name(3)).as("NEWSETELEM").isEqualTo("NFTA_SET_ELEM_LIST_ELEMENTS");
        assertThat(nft(12).inner(3).inner(1).name(5)).isEqualTo("NFTA_SET_ELEM_EXPIRATION");
        assertThat(nft(6).name(4)).as("NEWRULE").isEqualTo("NFTA_RULE_EXPRESSIONS");
        assertThat(nft(6).inner(4).name(1)).isEqualTo("NFTA_LIST_ELEM");
        assertThat(nft(6).inner(4).inner(1).name(1)).isEqualTo("NFTA_EXPR_NAME");
        assertThat(nft(3).name(4)).as("NEWCHAIN").isEqualTo("NFTA_CHAIN_HOOK");
        assertThat(nft(3).inner(4).name(1)).isEqualTo("NFTA_HOOK_HOOKNUM");
        assertThat(nft(0).name(1)).as("NEWTABLE").isEqualTo("NFTA_TABLE_NAME");
        assertThat(RequestLayouts.of(NetlinkProtocol.NETFILTER, 16).attributes().name(1)).as("batch begin")
                .isEqualTo("NFNL_BATCH_GENID");
    }

    @Test
    void rtnetlinkLinksAddressesAndRoutes() {
        assertThat(route(16).name(4)).as("NEWLINK").isEqualTo("IFLA_MTU");
        assertThat(route(16).name(10)).isEqualTo("IFLA_MASTER");
        assertThat(route(16).inner(18).name(2)).isEqualTo("IFLA_INFO_DATA");
        assertThat(route(20).name(2)).as("NEWADDR").isEqualTo("IFA_LOCAL");
        assertThat(route(20).name(3)).isEqualTo("IFA_LABEL");
        assertThat(route(24).name(4)).as("NEWROUTE").isEqualTo("RTA_OIF");
        assertThat(route(24).name(5)).isEqualTo("RTA_GATEWAY");
    }

    @Test
    void aNumberBeyondTheEnumHasNoName() {
        assertThat(nft(0).name(200)).isNull();
        assertThat(nft(0).inner(1)).as("a table's name nests nothing").isNull();
        assertThat(RequestLayouts.of(NetlinkProtocol.SOCK_DIAG, 20)).isNull();
    }
}
