package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Nftables;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import dev.gatun.rtnl.Prefix;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static dev.gatun.testing.Specs.ports;
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
            gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP);
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
            gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            String made = Oracle.in(host, "nft", "list", "ruleset");
            gatun.deleteNetwork("dual", true);
            dualStack(gatun);
            gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP);
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).as("as createNetwork and ensure make it").isEqualTo(made);
        }
    }

    /**
     * Two processes' first containers at once on a host without gatun's table (two drivers, each
     * its own sockets), twenty times: one makes the table in its transaction, the other finds it
     * made when its own fails, plans again, and both containers' ports and networks go in.
     */
    @Test
    void twoFirstContainersAtOnceOnAHostWithoutGatunsTableBothGoIn(NetworkNamespace host) throws Exception {
        NetworkSpec second = NetworkSpec.named("other").subnet4(Prefix.parse("10.91.1.0/24")).build();
        try (GatunDriver one = open(host); GatunDriver two = open(host);
             java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2)) {
            for (int round = 0; round < 20; round++) {
                one.createNetworkForPublish(dualStackSpec());
                two.createNetworkForPublish(second);
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                var first = pool.submit(() -> {
                    start.await();
                    return one.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP);
                });
                var other = pool.submit(() -> {
                    start.await();
                    return two.publishAll(new PortsByAddress("other", Map.of(Prefix.address("10.91.1.2"), ports("9090:90")), "c2"),
                            HostPortCheck.SKIP);
                });
                assertThat(first.get()).hasSize(2);
                assertThat(other.get()).hasSize(1);
                String ruleset = Oracle.in(host, "nft", "list", "ruleset");
                assertThat(ruleset).contains(": 10.90.1.2 . 80", ": 10.91.1.2 . 90", "10.90.1.0/24", "10.91.1.0/24");
                one.deleteNetwork("dual", true);
                two.deleteNetwork("other", true);
                assertThat(Oracle.in(host, "nft", "list", "tables")).doesNotContain("gatun");
            }
        }
    }

    /** Both families' ports of a container, as the engine adapters publish them: one transaction. */
    @Test
    void aContainersPortsOnBothFamiliesAreOneTransaction(NetworkNamespace host) {
        try (GatunDriver gatun = open(host); Nftables nft = Nftables.open(host)) {
            dualStack(gatun);
            int before = nft.generation();
            gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80", "5353:53/udp"), "c1"), HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).contains(": 10.90.1.2 . 80", ": fd00:90:1::2 . 53");
        }
    }
}
