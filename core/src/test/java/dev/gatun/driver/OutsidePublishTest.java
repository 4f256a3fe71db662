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

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Ports published to a container on none of gatun's networks (a CNI chain after another
 * plugin's bridge), checked with the nft binary: published without any network of gatun's, kept
 * when gatun's last network goes, repaired by a serve's driver, and refused for an address that
 * is on one of gatun's networks; the masquerade of a routed container's localhost and hairpin
 * connections put back too.
 */
@ExtendWith(FreshNamespaces.class)
class OutsidePublishTest {

    private static final InetAddress FOREIGN = InetAddress.ofLiteral("10.99.0.2");

    private static String elements(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports4").stdout();
    }

    @Test
    void publishedWithoutANetworkListedAndRemovedByOwner(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            List<PortMapping> done = d.publishOutside("podman", FOREIGN, List.of(PortSpec.parse("8080:80"),
                    PortSpec.parse("5353:53/udp")), "c1/eth0@podman");
            assertThat(done).extracting(PortMapping::network).containsOnly("podman");
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0@podman\" : 10.99.0.2 . 80");
            assertThat(d.publishedOutside()).extracting(PortMapping::hostPort).containsExactly(8080, 5353);
            assertThat(d.published(null)).as("on no network of gatun's").isEmpty();
            assertThat(d.unpublishOutside("podman", FOREIGN, List.of(), "c1/eth0@podman")).hasSize(2);
            assertThat(elements(host)).doesNotContain("8080");
        }
    }

    @Test
    void theLastNetworkGoingKeepsThemAndTheTable(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            d.publishOutside("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman");
            d.deleteNetwork("n1", true);
            assertThat(elements(host)).contains("tcp . 8080");
            assertThat(d.publishedOutside()).hasSize(1);
        }
    }

    @Test
    void anAddressOnANetworkOfGatunsIsRefused(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            assertThatThrownBy(() -> d.publishOutside("x", InetAddress.ofLiteral("10.88.0.5"),
                    List.of(PortSpec.parse("8080:80")), "o")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("on network n1");
        }
    }

    @Test
    void aServesDriverPutsThemBackWithNoNetworkOfItsOwn(NetworkNamespace host) throws InterruptedException {
        List<String> log = new CopyOnWriteArrayList<>();
        try (GatunDriver d = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            d.publishOutside("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman");
            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
            for (int i = 0; i < 100 && !elements(host).contains("tcp . 8080"); i++) {
                Thread.sleep(50);
            }
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0@podman\"");
            d.unpublishOutside("podman", FOREIGN, List.of(), "c1/eth0@podman");
        }
    }

    @Test
    void aServesDriverPutsBackTheMasqueradeOfAnOutsideContainer(NetworkNamespace host, NetworkNamespace c1)
            throws InterruptedException {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("vout", null, "eth0", null, c1, null);
            rt.addAddress("vout", Prefix.parse("10.99.0.1/24"));
            rt.setUp("vout", true);
        }
        List<String> log = new CopyOnWriteArrayList<>();
        try (GatunDriver d = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            d.publishOutside("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman");
            assertThat(outside(host)).contains("\"vout\" . 10.99.0.2");
            Oracle.in(host, "nft", "flush", "ruleset");
            for (int i = 0; i < 100 && !outside(host).contains("10.99.0.2"); i++) {
                Thread.sleep(50);
            }
            assertThat(outside(host)).contains("\"vout\" . 10.99.0.2");
            assertThat(String.join("\n", log)).contains("localhost and hairpin connections to 10.99.0.2 by vout");
            d.unpublishOutside("podman", FOREIGN, List.of(), "c1/eth0@podman");
            assertThat(outside(host)).doesNotContain("10.99.0.2");
        }
    }

    private static String outside(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "set", "inet", "gatun", "outside4").stdout();
    }
}
