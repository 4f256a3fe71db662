package dev.gatun.driver.bridge;

import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Links whose alias claims to be gatun's but cannot be read (set with the real {@code ip}, as a
 * person or another tool would), and links with another tool's alias, sit beside a network of
 * gatun's: every listing still answers, without them, and the network keeps working.
 */
@ExtendWith(FreshNamespaces.class)
class UnreadableAliasTest {

    @Test
    void aLinkWithAnUnreadableAliasIsLeftOutAndTheRestWorks(NetworkNamespace host, NetworkNamespace container) {
        try (BridgeDriver gatun = BridgeDriver.nftables(host)) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            Oracle.in(host, "ip", "link", "add", "bad0", "type", "bridge");
            Oracle.in(host, "ip", "link", "set", "bad0", "alias", "gatun-network name=bad v4=not-a-subnet gw4=10.89.0.1");
            Oracle.in(host, "ip", "link", "add", "other0", "type", "bridge");
            Oracle.in(host, "ip", "link", "set", "other0", "alias", "a bridge of another tool");
            Oracle.in(host, "ip", "link", "add", "bad1", "type", "veth", "peer", "name", "bad1p");
            Oracle.in(host, "ip", "link", "set", "bad1", "alias",
                    "gatun-endpoint network=n1 ifname=eth0 ip=10.88.0.2 mac=%zz owner=x");
            assertThat(gatun.networks()).extracting(Network::name).containsExactly("n1");
            assertThat(gatun.endpoints("n1")).isEmpty();
            Endpoint e = gatun.attach(EndpointSpec.of("n1", container));
            // The first free address: the unreadable alias's 10.88.0.2 holds nothing.
            assertThat(e.ip()).isEqualTo(InetAddress.ofLiteral("10.88.0.2"));
            assertThat(gatun.endpoints("n1")).containsExactly(e);
            gatun.detach("n1", container, null);
            gatun.deleteNetwork("n1", false);
            assertThat(gatun.networks()).isEmpty();
            assertThat(Oracle.in(host, "ip", "-o", "link", "show")).contains("bad0", "other0", "bad1");
        }
    }
}
