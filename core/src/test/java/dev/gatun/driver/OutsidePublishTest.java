package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
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
            List<PortMapping> done = d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80"),
                    PortSpec.parse("5353:53/udp")), "c1/eth0@podman"), HostPortCheck.SKIP);
            assertThat(done).extracting(PortMapping::network).containsOnly("podman");
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0@podman\" : 10.99.0.2 . 80");
            assertThat(d.publishedOutside()).extracting(PortMapping::hostPort).containsExactly(8080, 5353);
            assertThat(d.published(null)).as("on no network of gatun's").isEmpty();
            assertThat(d.unpublishOutside(new PortRequest("podman", FOREIGN, List.of(), "c1/eth0@podman"))).hasSize(2);
            assertThat(elements(host)).doesNotContain("8080");
        }
    }

    /** One reading for `gatun ls`: the ports of each network, then those outside them, as the two listings give them. */
    @Test
    void allPublishedListsEachNetworksPortsThenThoseOutside(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("9090:90")), "c1/eth0@podman"), HostPortCheck.SKIP);
            d.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.2"), List.of(PortSpec.parse("8080:80"),
                    PortSpec.parse("5353:53/udp")), "web"), HostPortCheck.SKIP);

            List<PortMapping> all = d.allPublished();

            assertThat(all).extracting(PortMapping::network, PortMapping::hostPort).containsExactly(
                    tuple("n1", 8080), tuple("n1", 5353),
                    tuple(null, 9090));
            List<PortMapping> twoReadings = new ArrayList<>(d.published(null));
            twoReadings.addAll(d.publishedOutside());
            assertThat(all).isEqualTo(twoReadings);
        }
    }

    /** `gatun ls --stats` likewise: a counted network's ports with their counts, then those outside with none. */
    @Test
    void allTrafficListsEachNetworksCountsThenThoseOutside(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse("10.88.0.0/16")).counters(true).build());
            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("9090:90")), "c1/eth0@podman"), HostPortCheck.SKIP);
            d.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.2"), List.of(PortSpec.parse("8080:80")), "web"), HostPortCheck.SKIP);

            List<PortTraffic> all = d.allTraffic();

            assertThat(all).extracting(t -> t.mapping().network(), t -> t.mapping().hostPort(), t -> t.traffic() != null)
                    .containsExactly(tuple("n1", 8080, true), tuple(null, 9090, false));
            List<PortTraffic> twoReadings = new ArrayList<>(d.traffic(null));
            d.publishedOutside().forEach(m -> twoReadings.add(new PortTraffic(m, null)));
            assertThat(all).isEqualTo(twoReadings);
        }
    }

    /** The maps are read without listing the table first: a missing table is no mappings, not a failure. */
    @Test
    void aHostWithoutGatunsTableListsNoMappings(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            assertThat(Oracle.in(host, "nft", "list", "tables")).doesNotContain("gatun");
            assertThat(d.publishedOutside()).isEmpty();
            assertThat(d.published(null)).isEmpty();

            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman"), HostPortCheck.SKIP);
            assertThat(d.publishedOutside()).hasSize(1);
            Oracle.in(host, "nft", "delete", "table", "inet", "gatun");

            assertThat(d.publishedOutside()).isEmpty();
            assertThat(d.traffic(null)).isEmpty();
        }
    }

    @Test
    void theLastNetworkGoingKeepsThemAndTheTable(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman"), HostPortCheck.SKIP);
            d.deleteNetwork("n1", true);
            assertThat(elements(host)).contains("tcp . 8080");
            assertThat(d.publishedOutside()).hasSize(1);
        }
    }

    /**
     * The same while the two race, twenty times: the last network's removal reads that no port
     * is left and then tears gatun's table down, and an outside publish committed in between
     * would be answered and then go with the table. Either order keeps it.
     */
    @Test
    void aPortPublishedWhileTheLastNetworkGoesIsKept(NetworkNamespace host) throws Exception {
        try (GatunDriver d = Gatun.open(host, "nftables");
             java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2)) {
            for (int round = 0; round < 20; round++) {
                d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                var published = pool.submit(() -> {
                    start.await();
                    return d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman"),
                            HostPortCheck.SKIP);
                });
                var removed = pool.submit(() -> {
                    start.await();
                    d.deleteNetwork("n1", true);
                    return null;
                });
                removed.get(60, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(published.get(60, java.util.concurrent.TimeUnit.SECONDS)).as("round %d", round).hasSize(1);
                assertThat(elements(host)).as("round %d", round).contains("tcp . 8080");
                assertThat(d.publishedOutside()).as("round %d", round).hasSize(1);
                d.unpublishOutside(new PortRequest("podman", FOREIGN, List.of(), "c1/eth0@podman"));
            }
        }
    }

    @Test
    void anAddressOnANetworkOfGatunsIsRefused(NetworkNamespace host) {
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            assertThatThrownBy(() -> d.publishOutside(new PortRequest("x", InetAddress.ofLiteral("10.88.0.5"),
                    List.of(PortSpec.parse("8080:80")), "o"), HostPortCheck.SKIP)).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("on network n1");
        }
    }

    @Test
    void aServesDriverPutsThemBackWithNoNetworkOfItsOwn(NetworkNamespace host) throws InterruptedException {
        List<String> log = new CopyOnWriteArrayList<>();
        try (GatunDriver d = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman"), HostPortCheck.SKIP);
            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
            for (int i = 0; i < 100 && !elements(host).contains("tcp . 8080"); i++) {
                Thread.sleep(50);
            }
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1/eth0@podman\"");
            d.unpublishOutside(new PortRequest("podman", FOREIGN, List.of(), "c1/eth0@podman"));
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
            d.publishOutside(new PortRequest("podman", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1/eth0@podman"), HostPortCheck.SKIP);
            assertThat(outside(host)).contains("\"vout\" . 10.99.0.2");
            Oracle.in(host, "nft", "flush", "ruleset");
            for (int i = 0; i < 100 && !outside(host).contains("10.99.0.2"); i++) {
                Thread.sleep(50);
            }
            assertThat(outside(host)).contains("\"vout\" . 10.99.0.2");
            assertThat(String.join("\n", log)).contains("localhost and hairpin connections to 10.99.0.2 by vout");
            d.unpublishOutside(new PortRequest("podman", FOREIGN, List.of(), "c1/eth0@podman"));
            assertThat(outside(host)).doesNotContain("10.99.0.2");
        }
    }

    /**
     * An engine that reserves its ports itself (dockerd, docker-proxy) is played by this test's
     * own process, which holds the port: its socket is taken as the reservation only when the
     * check names this process, and the same socket is refused under any other name.
     */
    @Test
    void aPortHeldByTheNamedEngineIsPublishedOverAndByAnyOtherProcessRefused(NetworkNamespace host) throws Exception {
        String self = Files.readString(Path.of("/proc/self/comm")).strip();
        try (GatunDriver d = Gatun.open(host, "nftables");
             ServerSocketChannel held = host.call(() -> ServerSocketChannel.open().bind(new InetSocketAddress("0.0.0.0", 8080)))) {
            assertThatThrownBy(() -> d.publishOutside(new PortRequest("docker", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1"),
                    HostPortCheck.exceptHeldBy("dockerd", "docker-proxy")))
                    .isInstanceOf(ConflictException.class)
                    .hasMessageContaining("*:8080/tcp").hasMessageContaining(self + " (pid " + ProcessHandle.current().pid() + ")");
            assertThatThrownBy(() -> d.publishOutside(new PortRequest("docker", FOREIGN, List.of(PortSpec.parse("8080:80")), "c1"),
                    HostPortCheck.CHECK)).isInstanceOf(ConflictException.class);
            assertThat(elements(host)).as("nothing committed by a refusal").doesNotContain("8080");

            assertThat(d.publishOutside(new PortRequest("docker", FOREIGN, List.of(PortSpec.parse("8080:80"), PortSpec.parse("8081:81")),
                    "c1"), HostPortCheck.exceptHeldBy("docker-proxy", self))).hasSize(2);
            assertThat(elements(host)).contains("tcp . 8080 comment \"c1\" : 10.99.0.2 . 80", "tcp . 8081");
            assertThat(held.isOpen()).isTrue();
        }
    }

    @Test
    void aCheckThatDoesNotAskNamesNoEngineAndNamesAreProcessNames() {
        assertThatThrownBy(() -> new HostPortCheck(false, Set.of("dockerd"))).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("[dockerd]");
        assertThatThrownBy(() -> HostPortCheck.exceptHeldBy("/usr/bin/dockerd")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("'/usr/bin/dockerd'");
        assertThatThrownBy(() -> HostPortCheck.exceptHeldBy("a-name-of-sixteen")).isInstanceOf(InvalidInputException.class);
        assertThat(HostPortCheck.exceptHeldBy("docker-proxy").asks()).isTrue();
    }

    private static String outside(NetworkNamespace host) {
        return Oracle.tryIn(host, "nft", "list", "set", "inet", "gatun", "outside4").stdout();
    }
}
