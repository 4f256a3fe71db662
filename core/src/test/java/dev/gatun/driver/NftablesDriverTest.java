package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Nftables;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
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

    /**
     * A network's first container, as netavark and CNI set it up: the network made for its
     * ports (a bridge, no transaction), then its entries and both families' ports in one.
     */
    @Test
    void aNetworksFirstContainerIsOneTransaction(NetworkNamespace host) {
        try (GatunDriver gatun = open(host); Nftables nft = Nftables.open(host)) {
            // Another network first: gatun's table is there, as on any host where gatun runs a network.
            gatun.createNetwork(Specs.n1());
            int before = nft.generation();
            Network n = gatun.createNetworkForPublish(dualStackSpec());
            assertThat(nft.generation()).as("the bridge alone: no transaction").isEqualTo(before);
            gatun.publishAll("dual", bothFamilies("8080:80"), "c1", HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "masq4")).contains("10.90.1.0/24");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "bridges")).contains(n.bridge());
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).contains(": 10.90.1.2 . 80", ": fd00:90:1::2 . 80");
        }
    }

    /**
     * The same on a host where gatun has no network yet (a Podman host whose one network went with
     * its last container): gatun's table is made in that one transaction too, whole.
     */
    @Test
    void aFirstContainerOnAHostWithoutGatunsTableIsOneTransaction(NetworkNamespace host) {
        try (GatunDriver gatun = open(host); Nftables nft = Nftables.open(host)) {
            int before = nft.generation();
            gatun.createNetworkForPublish(dualStackSpec());
            assertThat(Oracle.in(host, "nft", "list", "tables")).as("no table before the ports").doesNotContain("gatun");
            gatun.publishAll("dual", bothFamilies("8080:80"), "c1", HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            String made = Oracle.in(host, "nft", "list", "ruleset");
            gatun.deleteNetwork("dual", true);
            dualStack(gatun);
            gatun.publishAll("dual", bothFamilies("8080:80"), "c1", HostPortCheck.SKIP);
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).as("as createNetwork and ensure make it").isEqualTo(made);
        }
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
