package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;

/** The traffic suite on the nftables driver. */
class NftablesTrafficTest extends DriverTrafficSuite {
    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "nftables");
    }

    @Test
    void sctpMappingIsProgrammedAsAMapElement(NetworkNamespace host) {
        try (GatunDriver gatun = Specs.withNetwork(open(host))) {
            gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.2"), ports("8081:81/sctp"), null));
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains("sctp . 8081 comment \"10.88.0.2\" : 10.88.0.2 . 81");
        }
    }
}
