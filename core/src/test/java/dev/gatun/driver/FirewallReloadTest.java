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
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A firewall reload of iptables as ufw does it: its saved filter table restored whole, which
 * takes gatun's chain and jump with it. A serve's driver puts them back: for iptables-nft, whose
 * tables notify, at once (bound: two seconds); for legacy x_tables, which do not, at its check
 * every five seconds (bound: seven). Measured from the restore's exit to gatun's jump in the listing, with traffic through
 * the published port before and after.
 */
@ExtendWith(FreshNamespaces.class)
class FirewallReloadTest {

    private static final String SUBNET = "10.88.0.0/16";

    @Test
    void anIptablesNftReloadIsRepairedWithinTwoSeconds(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                                       @TempDir Path dir) throws Exception {
        // Measured 79-969 ms in 9 runs at a load average of 9-13 on two cores: a second is not reliably true here.
        reloadIsRepairedWithin("iptables-nft", 2_000, host, outside, c1, dir);
    }

    @Test
    void anIptablesLegacyReloadIsRepairedAtTheFiveSecondCheck(NetworkNamespace host, NetworkNamespace outside,
                                                               NetworkNamespace c1, @TempDir Path dir) throws Exception {
        // Measured 4.9-6.1 s in 3 runs: the five-second check, then the check's own reading and restore.
        reloadIsRepairedWithin("iptables-legacy", 7_000, host, outside, c1, dir);
    }

    private static void reloadIsRepairedWithin(String iptables, long millis, NetworkNamespace host, NetworkNamespace outside,
                                               NetworkNamespace c1, Path dir) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        HostFirewalls.apply(host, iptables, HostFirewalls.UFW);
        Path ufwRules = Files.writeString(dir.resolve("ufw.save"), Oracle.in(host, iptables + "-save"));
        // The control: with no serve running, the reload takes gatun's chain and jump away.
        try (BridgeDriver plain = BridgeDriver.nftables(host)) {
            plain.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            assertThat(Oracle.in(host, iptables + "-save")).contains("-A FORWARD -j GATUN-ALLOW");
            reload(host, iptables, ufwRules);
            assertThat(Oracle.in(host, iptables + "-save")).as("after the reload, no serve running")
                    .doesNotContain("GATUN-ALLOW");
        }
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(BridgeDriver.nftables(host), log::add);
             ReplyServers servers = new ReplyServers()) {
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            servers.tcp(c1, e1.ip().getHostAddress(), 80, "c1");
            gatun.publish(new PortRequest("n1", e1.ip(), List.of(PortSpec.parse("8080:80")), null));
            try (BridgeDriver kernel = BridgeDriver.nftables(host)) {
                kernel.repairOtherFirewalls();
            }
            assertThat(Oracle.in(host, iptables + "-save")).contains("-A FORWARD -j GATUN-ALLOW");
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1");

            reload(host, iptables, ufwRules);
            long t0 = System.nanoTime();
            long deadline = t0 + millis * 1_000_000;
            String now = Oracle.in(host, iptables + "-save");
            while (!now.contains("-A FORWARD -j GATUN-ALLOW") && System.nanoTime() < deadline) {
                Thread.sleep(20);
                now = Oracle.in(host, iptables + "-save");
            }
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            assertThat(now).as("gatun's jump within " + millis + " ms of the reload (" + tookMs + " ms; log: " + log + ")")
                    .contains("-A FORWARD -j GATUN-ALLOW", "-A GATUN-ALLOW -i gatun-n1 -j ACCEPT");
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("after the repair").isEqualTo("c1");
        }
    }

    /** What a firewall's reload does to its iptables: its saved tables restored whole, flushing everything else there. */
    private static void reload(NetworkNamespace host, String iptables, Path saved) {
        Oracle.in(host, iptables + "-restore", "--wait=10", saved.toString());
    }
}
