package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Nftables;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The contract suite on the nftables driver. */
class NftablesDriverTest extends DriverContractSuite {

    @Override
    GatunDriver open(NetworkNamespace host) {
        return Gatun.open(host, "nftables");
    }

    @Override
    String firewallState(NetworkNamespace host) {
        return Oracle.in(host, "nft", "list", "ruleset");
    }

    @Override
    boolean firewallKnowsBridge(NetworkNamespace host, String bridge) {
        return Oracle.in(host, "nft", "list", "ruleset").contains("\"" + bridge + "\"");
    }

    /** Both families' ports of a container, as the engine adapters publish them: one transaction. */
    @Test
    void aContainersPortsOnBothFamiliesAreOneTransaction(NetworkNamespace host) {
        try (GatunDriver gatun = open(host); Nftables nft = Nftables.open(host)) {
            dualStack(gatun);
            int before = nft.generation();
            gatun.publishAll("dual", bothFamilies("8080:80", "5353:53/udp"), "c1", HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).contains(": 10.90.1.2 . 80", ": fd00:90:1::2 . 53");
        }
    }
}
