package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A bridge another program made (here by hand, as dockerd makes docker0), adopted: its entries
 * in gatun's sets as a network's, read back by the nft binary; remembered in its alias, put back
 * by a serve's driver after a flush, replaced when adopted with other values, and gone with the
 * table once released. The bridge itself is never gatun's to change or list.
 */
@ExtendWith(FreshNamespaces.class)
class AdoptedBridgeTest {

    private static final AdoptedBridge DOCKER0 = new AdoptedBridge("docker:bridge", "dock0", Prefix.parse("172.31.9.0/24"),
            null, true, false, true);

    private static void bridge(NetworkNamespace host, String name, String address) {
        Oracle.in(host, "ip", "link", "add", name, "type", "bridge");
        Oracle.in(host, "ip", "addr", "add", address, "dev", name);
        Oracle.in(host, "ip", "link", "set", name, "up");
    }

    private static String set(NetworkNamespace host, String name) {
        return Oracle.tryIn(host, "nft", "list", "set", "inet", "gatun", name).stdout();
    }

    private static String alias(NetworkNamespace host, String link) {
        return Oracle.in(host, "ip", "-o", "link", "show", link);
    }

    @Test
    void anAdoptedBridgeGetsANetworksEntriesAndNothingElseOfGatuns(NetworkNamespace host) {
        bridge(host, "dock0", "172.31.9.1/24");
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.adoptBridge(DOCKER0);
            assertThat(set(host, "bridges")).contains("\"dock0\"");
            assertThat(set(host, "samebridge")).contains("\"dock0\" . \"dock0\"");
            assertThat(set(host, "subnets4")).contains("172.31.9.0/24");
            assertThat(set(host, "masq4")).contains("172.31.9.0/24");
            assertThat(set(host, "internal")).doesNotContain("dock0");
            assertThat(alias(host, "dock0")).contains("alias gatun-adopted name=docker%3Abridge v4=172.31.9.0%2F24");
            assertThat(d.adoptedBridges()).containsExactly(DOCKER0);
            assertThat(d.networks()).as("not a network of gatun's").isEmpty();
            assertThat(Oracle.in(host, "ip", "-o", "-4", "addr", "show", "dev", "dock0")).contains("172.31.9.1/24");

            d.adoptBridge(DOCKER0); // the same again: nothing to change
            AdoptedBridge internal = new AdoptedBridge("docker:bridge", "dock0", Prefix.parse("172.31.9.0/24"), null, false, true,
                    true);
            d.adoptBridge(internal);
            assertThat(set(host, "internal")).contains("\"dock0\"");
            assertThat(set(host, "samebridge")).as("no icc: its ports do not reach each other").doesNotContain("dock0");
            assertThat(set(host, "masq4")).as("an internal network is not masqueraded").doesNotContain("172.31.9.0/24");
            assertThat(d.adoptedBridges()).containsExactly(internal);

            d.releaseBridge(internal);
            assertThat(d.adoptedBridges()).isEmpty();
            assertThat(alias(host, "dock0")).doesNotContain("gatun-adopted");
            assertThat(Oracle.in(host, "nft", "list", "tables")).as("nothing of gatun's left").doesNotContain("gatun");
            assertThat(Oracle.in(host, "ip", "-o", "link", "show", "dock0")).as("the bridge stays").contains("dock0");
        }
    }

    @Test
    void aServesDriverPutsAnAdoptedBridgesEntriesBackAfterAFlush(NetworkNamespace host) throws InterruptedException {
        bridge(host, "dock0", "172.31.9.1/24");
        List<String> log = new CopyOnWriteArrayList<>();
        try (GatunDriver d = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            d.adoptBridge(DOCKER0);
            Oracle.in(host, "nft", "flush", "ruleset");
            for (int i = 0; i < 100 && !set(host, "masq4").contains("172.31.9.0/24"); i++) {
                Thread.sleep(50);
            }
            assertThat(set(host, "masq4")).contains("172.31.9.0/24");
            assertThat(set(host, "bridges")).contains("\"dock0\"");
            d.releaseBridge(DOCKER0);
        }
    }

    @Test
    void whatCannotBeAdoptedIsRefusedNamingIt(NetworkNamespace host, NetworkNamespace c1) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            assertThatThrownBy(() -> d.adoptBridge(DOCKER0)).isInstanceOf(NotFoundException.class)
                    .hasMessageContaining("dock0").hasMessageContaining("no such link");
            try (Rtnetlink rt = Rtnetlink.open(host)) {
                rt.createVeth("vnot", null, "eth0", null, c1, null);
            }
            assertThatThrownBy(() -> d.adoptBridge(new AdoptedBridge("x", "vnot", Prefix.parse("172.31.9.0/24"), null,
                    true, false, true))).isInstanceOf(InvalidInputException.class).hasMessageContaining("not a bridge");
            Network n1 = d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            assertThatThrownBy(() -> d.adoptBridge(new AdoptedBridge("x", n1.bridge(), Prefix.parse("172.31.9.0/24"), null,
                    true, false, true))).isInstanceOf(ConflictException.class).hasMessageContaining("a network of gatun's");
            bridge(host, "dock1", "10.88.200.1/24");
            assertThatThrownBy(() -> d.adoptBridge(new AdoptedBridge("x", "dock1", Prefix.parse("10.88.200.0/24"), null,
                    true, false, true))).isInstanceOf(ConflictException.class).hasMessageContaining("of network n1 overlaps");
            assertThatThrownBy(() -> new AdoptedBridge("has space", "dock1", Prefix.parse("10.1.0.0/24"), null, true, false, true))
                    .isInstanceOf(InvalidInputException.class);
            assertThat(set(host, "bridges")).doesNotContain("dock1").doesNotContain("vnot");
            d.deleteNetwork("n1", true);
        }
    }
}
