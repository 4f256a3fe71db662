package dev.gatun.driver;

import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.HostFirewalls;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.channels.DatagramChannel;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An ip6tables FORWARD that drops, as ufw (policy DROP, both variants) and Docker with IPv6
 * (its chains, through iptables-nft) leave it: real IPv6 traffic of a gatun network gets through
 * only because gatun opened it, shown by taking gatun's jump away (nothing passes) and by
 * gatun's repair putting it back (everything passes again).
 */
@ExtendWith(FreshNamespaces.class)
class Ip6tablesForwardTest {

    private static final String SUBNET4 = "10.88.0.0/16";
    private static final String SUBNET6 = "fd00:88::/64";
    private static final String OUTSIDE6 = "2001:db8::2";

    @Test
    void legacyPolicyDrop(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        ipv6FlowsOnlyThroughGatunsOpening("ip6tables-legacy", List.of("-P FORWARD DROP"), "FORWARD", host, outside, c1);
    }

    @Test
    void nftPolicyDrop(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        ipv6FlowsOnlyThroughGatunsOpening("ip6tables-nft", List.of("-P FORWARD DROP"), "FORWARD", host, outside, c1);
    }

    @Test
    void nftDockersChains(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        ipv6FlowsOnlyThroughGatunsOpening("ip6tables-nft", HostFirewalls.DOCKER, "DOCKER-USER", host, outside, c1);
    }

    private static void ipv6FlowsOnlyThroughGatunsOpening(String ip6tables, List<String> layout, String jumpFrom,
                                                          NetworkNamespace host, NetworkNamespace outside,
                                                          NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET4, SUBNET6);
        HostFirewalls.apply(host, ip6tables, layout);
        assertThat(Oracle.in(host, ip6tables + "-save")).contains(":FORWARD DROP");
        try (BridgeDriver gatun = BridgeDriver.nftables(host); ReplyServers servers = new ReplyServers();
             DatagramChannel udp = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET4)).subnet6(Prefix.parse(SUBNET6)).build());
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            String ip6 = e1.ip6().getHostAddress();
            servers.tcp(c1, ip6, 80, "c1-tcp6").udp(c1, ip6, 80, "c1-udp6").tcp(outside, OUTSIDE6, 7777, "outside6");
            gatun.publish(new PortRequest("n1", e1.ip6(), List.of(PortSpec.parse("[::]:8080:80"), PortSpec.parse("[::]:8080:80/udp")), null));
            assertThat(Oracle.in(host, ip6tables + "-save")).as("gatun's opening")
                    .contains("-A " + jumpFrom + " -j GATUN-ALLOW", "-A GATUN-ALLOW -i gatun-n1 -j ACCEPT");

            assertFlows(outside, c1, udp, true);

            // gatun's jump taken away (a plain driver does not repair): the drop is back in force.
            Oracle.in(host, ip6tables, "-w", "-D", jumpFrom, "-j", "GATUN-ALLOW");
            assertFlows(outside, c1, udp, false);

            gatun.repairOtherFirewalls();
            assertFlows(outside, c1, udp, true);
        }
    }

    private static void assertFlows(NetworkNamespace outside, NetworkNamespace c1, DatagramChannel udp, boolean open)
            throws Exception {
        String state = open ? " (gatun's opening in place)" : " (gatun's jump removed)";
        assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS6, 8080)).as("published TCP over IPv6" + state)
                .isEqualTo(open);
        assertThat(ReplyServers.udpAsk(udp, Lab.HOST_ADDRESS6, 8080)).as("published UDP over IPv6" + state)
                .isEqualTo(open ? "c1-udp6" : null);
        assertThat(ReplyServers.tcpAnswers(c1, OUTSIDE6, 7777)).as("the container's own IPv6 connection out" + state)
                .isEqualTo(open);
        if (open) {
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS6, 8080)).isEqualTo("c1-tcp6");
            assertThat(ReplyServers.tcpFetch(c1, OUTSIDE6, 7777)).isEqualTo("outside6");
        }
    }
}
