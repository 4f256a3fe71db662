package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.nft.Nftables;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.gatun.testing.Specs.ports;
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

    /**
     * route_localnet of an adopted bridge: turned on when it was off, and off again at release;
     * left as it was when its program had turned it on (dockerd without its userland proxy).
     */
    @Test
    void anAdoptedBridgesRouteLocalnetIsLeftAsGatunFoundIt(NetworkNamespace host) {
        bridge(host, "dock0", "172.31.9.1/24");
        bridge(host, "dock1", "172.31.10.1/24");
        Sysctls sysctls = new Sysctls(host);
        sysctls.setRouteLocalnet("dock1", true);
        AdoptedBridge dock1 = new AdoptedBridge("docker:two", "dock1", Prefix.parse("172.31.10.0/24"), null, true, false, true);
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.adoptBridge(DOCKER0);
            d.adoptBridge(dock1);
            assertThat(sysctls.read("ipv4/conf/dock0/route_localnet")).isEqualTo("1");
            assertThat(alias(host, "dock0")).contains("localnet=1");
            assertThat(alias(host, "dock1")).doesNotContain("localnet");

            // Someone turns it off while adopted: adopting again turns it on, and it is gatun's now.
            sysctls.setRouteLocalnet("dock1", false);
            d.adoptBridge(dock1);
            assertThat(sysctls.read("ipv4/conf/dock1/route_localnet")).isEqualTo("1");

            d.releaseBridge(DOCKER0);
            d.releaseBridge(dock1);
            assertThat(sysctls.read("ipv4/conf/dock0/route_localnet")).as("gatun turned it on").isEqualTo("0");
            assertThat(sysctls.read("ipv4/conf/dock1/route_localnet")).as("gatun turned it on the second time")
                    .isEqualTo("0");
        }
        bridge(host, "dock2", "172.31.11.1/24");
        sysctls.setRouteLocalnet("dock2", true);
        AdoptedBridge dock2 = new AdoptedBridge("docker:three", "dock2", Prefix.parse("172.31.11.0/24"), null, true, false, true);
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.adoptBridge(dock2);
            d.releaseBridge(dock2);
            assertThat(sysctls.read("ipv4/conf/dock2/route_localnet")).as("its program's").isEqualTo("1");
        }
    }

    /**
     * One container's event on an adopted bridge, as dockerd's follower sends it: a port taken
     * from one address, published to another, and a dual-stack container's ports, in one
     * nftables generation, with no target of the outside sets (the bridge's entries serve).
     */
    @Test
    void oneContainersChangeOnAnAdoptedBridgeIsOneTransaction(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "add", "dock0", "type", "bridge");
        Oracle.in(host, "ip", "addr", "add", "172.31.9.1/24", "dev", "dock0");
        Oracle.in(host, "ip", "addr", "add", "fd00:9::1/64", "dev", "dock0", "nodad");
        Oracle.in(host, "ip", "link", "set", "dock0", "up");
        AdoptedBridge dual = new AdoptedBridge("docker:dual", "dock0", Prefix.parse("172.31.9.0/24"),
                Prefix.parse("fd00:9::/64"), true, false, true);
        InetAddress old4 = Prefix.address("172.31.9.2");
        InetAddress new4 = Prefix.address("172.31.9.3");
        InetAddress new6 = Prefix.address("fd00:9::3");
        try (GatunDriver d = Gatun.open(host, "nftables"); Nftables nft = Nftables.open(host)) {
            d.adoptBridge(dual);
            d.publishOutside(new PortRequest("docker", old4, ports("8080:80", "9090:90"), "docker:aa"), HostPortCheck.SKIP);
            int before = nft.generation();
            Map<InetAddress, List<PortSpec>> publish = new LinkedHashMap<>();
            publish.put(new4, ports("8080:80", "5353:53/udp"));
            publish.put(new6, ports("8080:80"));
            List<OutsideChange.Outcome> done = d.changeOutside(new OutsideChange("docker", "docker:aa",
                    Map.of(old4, List.of()), publish, HostPortCheck.SKIP));
            assertThat(nft.generation() - before).as("one transaction").isEqualTo(1);
            assertThat(done).extracting(o -> o.containerIp().getHostAddress() + (o.published() ? " +" : " -")
                    + o.mappings().size()).containsExactly("172.31.9.2 -2", "172.31.9.3 +2", "fd00:9:0:0:0:0:0:3 +1");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains(": 172.31.9.3 . 80", ": 172.31.9.3 . 53").doesNotContain("9090");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports6")).contains(": fd00:9::3 . 80");
            assertThat(set(host, "outside4") + set(host, "outside6")).as("the bridge's own entries serve")
                    .doesNotContain("dock0");

            // Refused parts change nothing of their own, and are said; the rest goes in, in one transaction.
            before = nft.generation();
            List<OutsideChange.Outcome> mixed = d.changeOutside(new OutsideChange("docker", "docker:bb",
                    Map.of(), Map.of(old4, ports("8080:80"), Prefix.address("172.31.9.4"), ports("7070:70")),
                    HostPortCheck.SKIP));
            assertThat(nft.generation() - before).isEqualTo(1);
            assertThat(mixed).filteredOn(o -> o.refused() != null).singleElement()
                    .satisfies(o -> assertThat(o.refused()).isInstanceOf(ConflictException.class).hasMessageContaining("8080"));
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains(": 172.31.9.4 . 70");

            // Every part is checked before anything is sent: a bad one leaves the good one out too.
            before = nft.generation();
            Map<InetAddress, List<PortSpec>> bad = new LinkedHashMap<>();
            bad.put(new4, ports("6060:60"));
            bad.put(new6, ports("127.0.0.1:6061:60"));
            assertThatThrownBy(() -> d.changeOutside(new OutsideChange("docker", "docker:cc", Map.of(), bad,
                    HostPortCheck.SKIP))).isInstanceOf(InvalidInputException.class).hasMessageContaining("127.0.0.1");
            assertThat(nft.generation()).isEqualTo(before);
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).doesNotContain("6060");
        }
    }

    /**
     * A container's target from before its bridge was adopted (an older serve, or an address
     * published to before adoption) turned route_localnet on: when that target goes, the bridge
     * keeps it on for the containers it serves now, and its release turns it off.
     */
    @Test
    void aTargetFromBeforeTheAdoptionLeavesRouteLocalnetToTheBridge(NetworkNamespace host) {
        bridge(host, "dock0", "172.31.9.1/24");
        Sysctls sysctls = new Sysctls(host);
        InetAddress early = Prefix.address("172.31.9.2");
        try (GatunDriver d = Gatun.open(host, "nftables")) {
            d.publishOutside(new PortRequest("docker", early, ports("8080:80"), "docker:aa"), HostPortCheck.SKIP);
            assertThat(set(host, "outside4")).as("a target, as before adoption").contains("dock0");
            assertThat(sysctls.read("ipv4/conf/dock0/route_localnet")).isEqualTo("1");
            d.adoptBridge(DOCKER0);
            d.publishOutside(new PortRequest("docker", Prefix.address("172.31.9.3"), ports("8081:80"), "docker:bb"), HostPortCheck.SKIP);

            d.unpublishOutside(new PortRequest("docker", early, List.of(), "docker:aa"));
            assertThat(set(host, "outside4")).doesNotContain("dock0");
            assertThat(sysctls.read("ipv4/conf/dock0/route_localnet")).as("docker:bb still needs it").isEqualTo("1");
            assertThat(alias(host, "dock0")).contains("localnet=1");

            d.unpublishOutside(new PortRequest("docker", Prefix.address("172.31.9.3"), List.of(), "docker:bb"));
            d.releaseBridge(DOCKER0);
            assertThat(sysctls.read("ipv4/conf/dock0/route_localnet")).as("gatun turned it on").isEqualTo("0");
        }
    }
}
