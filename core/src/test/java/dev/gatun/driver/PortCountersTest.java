package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.bridge.GatunRulesetShapes;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.channels.DatagramChannel;
import java.util.List;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Per-port counters, counted by the kernel on the map elements of networks made with them:
 * real datagrams from outside and from the host, counted against what was sent (each "ping"
 * datagram is 20 bytes of IPv4 header, 8 of UDP and 4 of payload), and nft reading the same
 * counters.
 */
@ExtendWith(FreshNamespaces.class)
class PortCountersTest {

    private static final String SUBNET = "10.88.0.0/16";
    private static final int PACKET_BYTES = 20 + 8 + "ping".length();

    @Test
    void aThousandDatagramsFromOutsideCountOnTheirMappingAndNoneOnItsNeighbours(NetworkNamespace host,
                                                                                 NetworkNamespace outside,
                                                                                 NetworkNamespace c1) throws Exception {
        aThousandDatagramsFromOutside(host, outside, c1);
        assertThat(Oracle.in(host, "nft", "list", "chain", "inet", "gatun", "count"))
                .contains("meta l4proto . ct original proto-dst @ports4");
    }

    private static void aThousandDatagramsFromOutside(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (HealableDriver gatun = Gatun.open(host, "nftables"); ReplyServers servers = new ReplyServers();
             DatagramChannel client = ReplyServers.udpClient(outside)) {
            Network n = gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).counters(true).build());
            assertThat(n.counters()).isTrue();
            assertThat(gatun.network("n1").counters()).as("read back from the bridge's alias").isTrue();
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            String ip = e.ip().getHostAddress();
            servers.udp(c1, ip, 80, "a").udp(c1, ip, 81, "b").tcp(c1, ip, 80, "t");
            gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80/udp", "8081:81/udp", "8080:80"), "app"));

            for (int i = 0; i < 1000; i++) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 8080)).as("answer %d", i).isEqualTo("a");
            }

            assertThat(counts(gatun)).containsExactly("TCP 8080 0 0", "UDP 8080 1000 " + 1000 * PACKET_BYTES,
                    "UDP 8081 0 0");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains("udp . 8080 counter packets 1000 bytes " + 1000 * PACKET_BYTES)
                    .contains("udp . 8081 counter packets 0 bytes 0");
        }
    }

    @Test
    void aHostProcessesDatagramsCountToo(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        try (HealableDriver gatun = Gatun.open(host, "nftables"); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).counters(true).build());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            servers.udp(c1, e.ip().getHostAddress(), 80, "a");
            gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80/udp"), "app"));
            try (DatagramChannel client = ReplyServers.udpClient(host)) {
                for (int i = 0; i < 100; i++) {
                    // The gateway is an address of the host: the host's output dnat takes it.
                    assertThat(ReplyServers.udpAsk(client, "10.88.0.1", 8080)).as("answer %d", i).isEqualTo("a");
                }
            }
            assertThat(counts(gatun)).containsExactly("UDP 8080 100 " + 100 * PACKET_BYTES);
        }
    }

    @Test
    void aNetworkWithoutCountersHasNoneAndItsTrafficIsNotCountedElsewhere(NetworkNamespace host,
                                                                           NetworkNamespace outside,
                                                                           NetworkNamespace c1, NetworkNamespace c2)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET, "10.89.0.0/16");
        try (HealableDriver gatun = Gatun.open(host, "nftables"); ReplyServers servers = new ReplyServers();
             DatagramChannel client = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(NetworkSpec.named("plain").subnet4(Prefix.parse(SUBNET)).build());
            gatun.createNetwork(NetworkSpec.named("counted").subnet4(Prefix.parse("10.89.0.0/16")).counters(true).build());
            Endpoint plain = gatun.attach(EndpointSpec.of("plain", c1));
            Endpoint counted = gatun.attach(EndpointSpec.of("counted", c2));
            servers.udp(c1, plain.ip().getHostAddress(), 80, "p").udp(c2, counted.ip().getHostAddress(), 80, "c");
            gatun.publish(new PortRequest("plain", plain.ip(), ports("8080:80/udp"), "p"));
            gatun.publish(new PortRequest("counted", counted.ip(), ports("9090:80/udp"), "c"));
            for (int i = 0; i < 10; i++) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 8080)).isEqualTo("p");
            }
            assertThat(gatun.network("plain").counters()).isFalse();
            assertThat(gatun.traffic("plain")).singleElement().satisfies(t -> assertThat(t.traffic()).isNull());
            assertThat(counts(gatun)).containsExactly("UDP 9090 0 0");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains("udp . 8080 comment")
                    .doesNotContain("udp . 8080 counter");
        }
    }

    @Test
    void aRepairPutsTheCounterBackWithTheMapping(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (HealableDriver gatun = Gatun.open(host, "nftables"); ReplyServers servers = new ReplyServers();
             DatagramChannel client = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).counters(true).build());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            servers.udp(c1, e.ip().getHostAddress(), 80, "a");
            List<PortMapping> published = gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80/udp"), "app"));

            Oracle.in(host, "nft", "flush", "ruleset");
            assertThat(gatun.repair(published)).as("what the repair put back").isNotEmpty();
            for (int i = 0; i < 10; i++) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 8080)).as("answer %d", i).isEqualTo("a");
            }
            // Counted from zero again: the old counts went with the flushed table.
            assertThat(counts(gatun)).containsExactly("UDP 8080 10 " + 10 * PACKET_BYTES);
        }
    }

    /**
     * The shape for kernels that refuse a map looked up by key alone (Linux 6.1): chain count
     * loads the data nothing reads. Forced here, where the kernel takes both; counted the same.
     */
    @Test
    void theShapeForOlderKernelsCountsTheSame(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        GatunRulesetShapes.useKeyOnlyLookups(false);
        try {
            aThousandDatagramsFromOutside(host, outside, c1);
            assertThat(Oracle.in(host, "nft", "list", "chain", "inet", "gatun", "count")).contains("for its counter")
                    .doesNotContain("ct original proto-dst @ports4");
        } finally {
            GatunRulesetShapes.useKeyOnlyLookups(true);
        }
    }

    @Test
    void theIptablesDriverRefusesCountersBeforeMakingAnything(NetworkNamespace host) {
        try (GatunDriver gatun = Gatun.open(host, "iptables-nft")) {
            assertThatThrownBy(() -> gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET))
                    .counters(true).build()))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("network n1").hasMessageContaining("nftables");
            assertThat(gatun.networks()).isEmpty();
        }
    }

    /** "PROTO HOSTPORT PACKETS BYTES" of each counted mapping of every network. */
    private static List<String> counts(GatunDriver gatun) {
        return gatun.traffic(null).stream().filter(t -> t.traffic() != null)
                .map(t -> t.mapping().protocol() + " " + t.mapping().hostPort() + " " + t.traffic().packets() + " "
                        + t.traffic().bytes()).toList();
    }
}
