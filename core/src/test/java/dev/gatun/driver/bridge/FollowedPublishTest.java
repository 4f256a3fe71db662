package dev.gatun.driver.bridge;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.SelfHealingDriver;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Nftables;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 34: under the self-healing driver (what serve runs) publishes are planned from memory
 * kept in step with the kernel's notifications, and committed without reading first. What
 * another process does between two publishes is seen all the same, whether its notification
 * was heard yet or not; the kernel, read with nft, holds what the answers say.
 */
@ExtendWith(FreshNamespaces.class)
class FollowedPublishTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress C2 = InetAddress.ofLiteral("10.88.0.3");

    /** gatun's map of IPv4 ports on every address, as nft lists it, without the owners' comments. */
    private static String ports4(NetworkNamespace host) {
        return Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").replaceAll(" comment \"[^\"]*\"", "");
    }

    /** The nftables driver of {@code host}, network n1 made. */
    private static BridgeDriver withNetwork(NetworkNamespace host) {
        BridgeDriver inner = (BridgeDriver) Gatun.open(host, "nftables");
        inner.createNetwork(Specs.n1());
        return inner;
    }

    @Test
    void publishesAfterTheFirstReadNothingAndLandInTheKernel(NetworkNamespace host) {
        BridgeDriver inner = withNetwork(host);
        try (SelfHealingDriver d = SelfHealingDriver.start(inner, line -> {})) {
            d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            long reads = inner.mapReads();
            assertThat(reads).as("memory was read once, at the first publish").isEqualTo(1);

            for (int i = 1; i <= 20; i++) {
                d.publish(new PortRequest("n1", C1, ports((8080 + i) + ":80/udp"), "alice"));
            }
            d.unpublish(new PortRequest("n1", C1, ports("8085:80/udp"), "alice"));
            assertThatThrownBy(() -> d.publish(new PortRequest("n1", C2, ports("8081:80/udp"), "bob")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            List<PortMapping> again = d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            List<PortMapping> moved = d.publish(new PortRequest("n1", C2, ports("8090:81/udp"), "alice"));

            assertThat(inner.mapReads()).as("reads after the first publish").isEqualTo(reads);
            assertThat(again).extracting(PortMapping::hostPort).containsExactly(8080);
            assertThat(moved).extracting(PortMapping::containerIp).containsExactly(C2);
            String map = ports4(host);
            assertThat(map).contains("tcp . 8080 : 10.88.0.2 . 80", "udp . 8081 : 10.88.0.2 . 80",
                    "udp . 8090 : 10.88.0.3 . 81").doesNotContain("udp . 8085 ");
            assertThat(d.published("n1")).hasSize(20);
        }
    }

    /**
     * A network's first container whose ports are all refused: its network's entries go in all
     * the same. Refused again, with the entries in place now (a commit that changes nothing),
     * memory is not read again; alice unpublishes and bob's ports go in, still from memory.
     */
    @Test
    void aFirstContainerWhosePortsAreRefusedLeavesItsNetworkWholeAndMemoryAsItWas(NetworkNamespace host) {
        BridgeDriver inner = withNetwork(host);
        InetAddress onN2 = InetAddress.ofLiteral("10.89.0.2");
        try (SelfHealingDriver d = SelfHealingDriver.start(inner, line -> {})) {
            d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            d.createNetworkForPublish(NetworkSpec.of("n2", Prefix.parse("10.89.0.0/24")));
            assertThatThrownBy(() -> d.publishAll(new PortsByAddress("n2", Map.of(onN2, ports("8080:80")), "bob"), HostPortCheck.SKIP))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "masq4")).contains("10.89.0.0/24");
            long reads = inner.mapReads();

            assertThatThrownBy(() -> d.publishAll(new PortsByAddress("n2", Map.of(onN2, ports("8080:80")), "bob"), HostPortCheck.SKIP))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            d.unpublish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            assertThat(d.publishAll(new PortsByAddress("n2", Map.of(onN2, ports("8080:80")), "bob"), HostPortCheck.SKIP))
                    .extracting(PortMapping::owner).containsExactly("bob");
            assertThat(inner.mapReads()).as("memory read again").isEqualTo(reads);
            assertThat(ports4(host)).contains("tcp . 8080 : 10.89.0.2 . 80");
        }
    }

    /**
     * On a host without gatun's table, under the self-healing driver: a network's first
     * container's publish makes the table, the network's entries and its ports in one
     * transaction, and memory follows; a plain publish to another network made for its ports
     * before they came finds no table's sets in its way either (its network is completed first).
     */
    @Test
    void aFirstContainerOnAHostWithoutGatunsTableIsOneTransactionAndMemoryFollows(NetworkNamespace host) {
        BridgeDriver inner = (BridgeDriver) Gatun.open(host, "nftables");
        try (SelfHealingDriver d = SelfHealingDriver.start(inner, line -> {});
             Nftables nft = Nftables.open(host)) {
            d.createNetworkForPublish(Specs.n1());
            int before = nft.generation();
            d.publishAll(new PortsByAddress("n1", Map.of(C1, ports("8080:80")), "alice"), HostPortCheck.SKIP);
            assertThat(nft.generation() - before).isEqualTo(1);
            assertThat(ports4(host)).contains("tcp . 8080 : 10.88.0.2 . 80");
            long reads = inner.mapReads();
            assertThatThrownBy(() -> d.publish(new PortRequest("n1", C2, ports("8080:80"), "bob")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            d.publish(new PortRequest("n1", C2, ports("8081:80"), "bob"));
            assertThat(inner.mapReads()).as("memory followed the commit that made the table").isEqualTo(reads);

            d.deleteNetwork("n1", true);
            assertThat(Oracle.in(host, "nft", "list", "tables")).as("the last network gone").doesNotContain("gatun");
            d.createNetworkForPublish(Specs.n1());
            assertThat(d.publish(new PortRequest("n1", C2, ports("9090:90"), "bob"))).extracting(PortMapping::owner).containsExactly("bob");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "masq4")).contains("10.88.0.0/16");
            assertThat(ports4(host)).contains("tcp . 9090 : 10.88.0.3 . 90");
        }
    }

    /**
     * Twenty times: a publish, then another process (nft) adds bob's element on a port, or takes
     * one of alice's away, and at once alice publishes on that port. bob's port is refused;
     * alice's is made again. Sometimes the notification is heard before the publish, sometimes
     * not: both ways the answer is the kernel's.
     */
    @Test
    void whatAnotherProcessDidBetweenTwoPublishesIsSeen(NetworkNamespace host) {
        BridgeDriver inner = withNetwork(host);
        try (SelfHealingDriver d = SelfHealingDriver.start(inner, line -> {})) {
            d.publish(new PortRequest("n1", C1, ports("7000:80"), "alice"));
            long reads = inner.mapReads();
            List<String> refusals = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                int own = 9000 + i;
                int foreign = 9500 + i;
                d.publish(new PortRequest("n1", C1, ports(own + ":80"), "alice"));
                Oracle.in(host, "nft", "add", "element", "inet", "gatun", "ports4",
                        "{ tcp . " + foreign + " comment \"bob\" : 10.88.0.9 . 80 }");
                try {
                    d.publish(new PortRequest("n1", C1, ports(foreign + ":80"), "alice"));
                } catch (ConflictException e) {
                    refusals.add(e.getMessage());
                }
                Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . " + own + " }");
                // Moved: memory that missed the deletion would delete an element that is gone (ENOENT).
                d.publish(new PortRequest("n1", C1, ports(own + ":81"), "alice"));
                assertThat(ports4(host)).contains("tcp . " + own + " : 10.88.0.2 . 81");
            }
            assertThat(refusals).hasSize(20).allMatch(m -> m.contains("owner bob"));
            assertThat(inner.mapReads()).as("the other process's changes were read").isGreaterThan(reads);
        }
    }
}
