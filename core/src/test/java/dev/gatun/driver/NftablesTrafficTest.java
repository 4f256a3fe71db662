package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.netns.NetworkNamespace;

/** The traffic suite on the nftables driver. */
class NftablesTrafficTest extends DriverTrafficSuite {
    @Override
    NetworkDriver open(NetworkNamespace host) {
        return Gatun.open(host, "nftables");
    }

    @org.junit.jupiter.api.Test
    void sctpMappingIsProgrammedAsAMapElement(NetworkNamespace host) {
        try (NetworkDriver gatun = open(host)) {
            gatun.createNetwork(NetworkSpec.of("n1", dev.gatun.rtnl.Prefix.parse("10.88.0.0/16")));
            gatun.publish("n1", java.net.InetAddress.ofLiteral("10.88.0.2"), java.util.List.of(PortSpec.parse("8081:81/sctp")),
                    null);
            org.assertj.core.api.Assertions.assertThat(dev.gatun.testing.Oracle.in(host, "nft", "list", "map", "inet",
                    "gatun", "ports4")).contains("sctp . 8081 comment \"10.88.0.2\" : 10.88.0.2 . 81");
        }
    }
}
