package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A host whose iptables chains an older gatun made, before networks were isolated from each
 * other: the next network created brings every network up to date.
 */
@ExtendWith(FreshNamespaces.class)
class IptablesUpgradeTest {

    @ParameterizedTest
    @ValueSource(strings = {"nft", "legacy"})
    void creatingANetworkIsolatesTheNetworksOfAnOlderGatun(String variant, NetworkNamespace host) {
        String iptables = "iptables-" + variant;
        try (GatunDriver gatun = Gatun.open(host, iptables)) {
            gatun.createNetwork(NetworkSpec.of("old", Prefix.parse("10.88.0.0/16")));
            String bridge = gatun.network("old").bridge();
            // What an older gatun left: no isolation jump, no isolation rules for its bridge.
            Oracle.in(host, iptables, "-w", "-t", "filter", "-D", "GATUN-FORWARD", "-j", "GATUN-ISOLATION-1");
            Oracle.in(host, iptables, "-w", "-t", "filter", "-F", "GATUN-ISOLATION-1");
            Oracle.in(host, iptables, "-w", "-t", "filter", "-F", "GATUN-ISOLATION-2");
            assertThat(rules(host, iptables, "GATUN-ISOLATION-1")).isEmpty();

            gatun.createNetwork(NetworkSpec.of("new", Prefix.parse("10.89.0.0/16")));
            String newBridge = gatun.network("new").bridge();

            List<String> forward = rules(host, iptables, "GATUN-FORWARD");
            assertThat(forward).hasSize(3);
            assertThat(forward.get(1)).as("isolation comes before the bridges' accepts").endsWith("-j GATUN-ISOLATION-1");
            assertThat(forward.get(2)).endsWith("-j GATUN-BRIDGES");
            for (String b : List.of(bridge, newBridge)) {
                assertThat(rules(host, iptables, "GATUN-ISOLATION-1")).as("stage 1 of " + b)
                        .anyMatch(r -> r.contains("-i " + b + " ! -o " + b + " "));
                assertThat(rules(host, iptables, "GATUN-ISOLATION-2")).as("stage 2 of " + b)
                        .anyMatch(r -> r.contains("-o " + b + " -j DROP"));
            }
            // Once up to date, another network adds nothing twice.
            gatun.createNetwork(NetworkSpec.of("third", Prefix.parse("10.90.0.0/16")));
            assertThat(rules(host, iptables, "GATUN-FORWARD")).hasSize(3);
            assertThat(rules(host, iptables, "GATUN-ISOLATION-1")).hasSize(3);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"nft", "legacy"})
    void creatingANetworkAddsTheLoopbackDropAnOlderGatunLacked(String variant, NetworkNamespace host) {
        String iptables = "iptables-" + variant;
        try (GatunDriver gatun = Gatun.open(host, iptables)) {
            gatun.createNetwork(NetworkSpec.of("old", Prefix.parse("10.88.0.0/16")));
            // What an older gatun left: no chain in table raw.
            Oracle.in(host, iptables, "-w", "-t", "raw", "-D", "PREROUTING", "-j", "GATUN-LOOPBACK");
            Oracle.in(host, iptables, "-w", "-t", "raw", "-F", "GATUN-LOOPBACK");
            Oracle.in(host, iptables, "-w", "-t", "raw", "-X", "GATUN-LOOPBACK");

            gatun.createNetwork(NetworkSpec.of("new", Prefix.parse("10.89.0.0/16")));

            assertThat(Oracle.in(host, iptables, "-w", "-t", "raw", "-S", "PREROUTING").lines().filter(l -> l.startsWith("-A ")))
                    .as("jumped to first").first().isEqualTo("-A PREROUTING -j GATUN-LOOPBACK");
            assertThat(Oracle.in(host, iptables, "-w", "-t", "raw", "-S", "GATUN-LOOPBACK"))
                    .contains("-A GATUN-LOOPBACK -d 127.0.0.0/8 ! -i lo");
            gatun.deleteNetwork("old", false);
            gatun.deleteNetwork("new", false);
            assertThat(Oracle.in(host, iptables + "-save", "-t", "raw")).as("gone with the last network")
                    .doesNotContain("GATUN");
        }
    }

    private static List<String> rules(NetworkNamespace ns, String iptables, String chain) {
        return Oracle.in(ns, iptables, "-w", "-t", "filter", "-S", chain).lines().filter(l -> l.startsWith("-A ")).toList();
    }
}
