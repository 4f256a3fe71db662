package dev.gatun.driver;

import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Firewalld;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * core/README.md: with firewalld, gatun's bridges go in zone {@code trusted}, and "like
 * Podman's, the zone also lets containers reach the host's own services". A real firewalld in
 * the test's namespace: a container reaches services of the host on its gateway and on another
 * host address while its bridge is in the zone, is rejected by firewalld's default zone once the
 * bridge is taken out, and gets through again when gatun's repair after a reload puts it back.
 */
@ExtendWith(FreshNamespaces.class)
class FirewalldHostServicesTest {

    private static final String SUBNET = "10.88.0.0/16";
    private static final String BRIDGE = "gatun-n1";
    /** A port no service of firewalld's default zone (public: ssh, dhcpv6-client) opens. */
    private static final int SERVICE_PORT = 9999;

    @Test
    void theTrustedZoneLetsContainersReachTheHostsOwnServices(NetworkNamespace host, NetworkNamespace outside,
                                                             NetworkNamespace c1, @TempDir Path dir) throws Exception {
        Firewalld.requireAvailable();
        Lab.connectOutside(host, outside, SUBNET);
        try (Firewalld fw = Firewalld.start(host, dir)) {
            System.setProperty("gatun.dbusSystemBusAddress", fw.busAddress());
            try (BridgeDriver gatun = BridgeDriver.nftables(host); ReplyServers servers = new ReplyServers()) {
                Network n1 = gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
                gatun.attach(EndpointSpec.of("n1", c1));
                String gateway = n1.gateways().getFirst().getHostAddress();
                servers.tcp(host, gateway, SERVICE_PORT, "host-on-gateway")
                        .tcp(host, Lab.HOST_ADDRESS, SERVICE_PORT, "host-on-uplink");
                assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=" + BRIDGE).stdout()).isEqualTo("yes\n");
                assertThat(fw.firewallCmdOk("--get-default-zone").stdout().strip()).isEqualTo("public");

                assertThat(ReplyServers.tcpFetch(c1, gateway, SERVICE_PORT)).as("a host service on the gateway, zone trusted")
                        .isEqualTo("host-on-gateway");
                assertThat(ReplyServers.tcpFetch(c1, Lab.HOST_ADDRESS, SERVICE_PORT))
                        .as("a host service on another host address, zone trusted").isEqualTo("host-on-uplink");

                // The control: the bridge out of the zone falls to firewalld's default zone, which rejects.
                fw.firewallCmdOk("--zone=trusted", "--remove-interface=" + BRIDGE);
                assertThat(ReplyServers.tcpAnswers(c1, gateway, SERVICE_PORT)).as("the gateway's service, bridge in no zone")
                        .isFalse();
                assertThat(ReplyServers.tcpAnswers(c1, Lab.HOST_ADDRESS, SERVICE_PORT))
                        .as("the uplink's service, bridge in no zone").isFalse();
                assertThat(ReplyServers.tcpFetch(host, gateway, SERVICE_PORT)).as("control: the service still answers the host")
                        .isEqualTo("host-on-gateway");

                // gatun syncs the zone when firewalld's table is new (a reload) or its bridges change,
                // not at every repair: a reload, then the repair a serve runs on its notification.
                fw.firewallCmdOk("--reload");
                gatun.repairOtherFirewalls();
                assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=" + BRIDGE).stdout()).isEqualTo("yes\n");
                assertThat(ReplyServers.tcpFetch(c1, gateway, SERVICE_PORT)).as("the gateway's service after the repair")
                        .isEqualTo("host-on-gateway");
                gatun.deleteNetwork("n1", true);
            } finally {
                System.clearProperty("gatun.dbusSystemBusAddress");
            }
        }
    }
}
