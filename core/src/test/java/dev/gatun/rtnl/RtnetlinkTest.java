package dev.gatun.rtnl;

import dev.gatun.InvalidInputException;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(FreshNamespaces.class)
class RtnetlinkTest {

    private static final MacAddress BRIDGE_MAC = MacAddress.parse("02:aa:00:00:00:01");

    private static String sysfs(NetworkNamespace ns, String link, String attribute) {
        return Oracle.in(ns, "cat", "/sys/class/net/" + link + "/" + attribute).strip();
    }

    @Test
    void linksOfOneKindAreFilteredByTheKernel(NetworkNamespace a) {
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            rt.createBridge("br-k", BRIDGE_MAC, null);
            rt.createVeth("vk0", null, "vk1", null, null, null);
            assertThat(rt.links("bridge")).extracting(Link::name).containsExactly("br-k");
            assertThat(rt.links("veth")).extracting(Link::name).containsExactlyInAnyOrder("vk0", "vk1");
        }
    }

    /**
     * A queue that really overruns: the kernel answers ENOBUFS, which counts as a change (the
     * cache reads everything again), and once drained the version stands still again.
     */
    @Test
    void anOverrunLinkWatchSaysChangedAndCountsTheOverrun(NetworkNamespace a) {
        try (LinkChanges changes = LinkChanges.watch(a, 4096)) {
            long start = changes.version();
            StringBuilder batch = new StringBuilder();
            for (int i = 0; i < 250; i++) {
                batch.append("link add ov").append(i).append(" type veth peer name ow").append(i).append('\n');
            }
            Oracle.batch(a, batch.toString());
            assertThat(changes.version()).as("after 500 links were added unread").isGreaterThan(start);
            assertThat(changes.overruns()).as("the kernel dropped announcements (ENOBUFS)").isPositive();
            long drained = changes.version();
            assertThat(changes.version()).as("nothing changed since").isEqualTo(drained);
        }
    }

    /** The version a link cache is checked against moves with every change, also past an overrun. */
    @Test
    void linkChangesMoveTheVersionAndNothingElseDoes(NetworkNamespace a) {
        try (LinkChanges changes = LinkChanges.watch(a); Rtnetlink rt = Rtnetlink.open(a)) {
            long start = changes.version();
            assertThat(changes.version()).as("nothing changed").isEqualTo(start);
            rt.createVeth("gw0", null, "gw1", null, null, null);
            long afterOne = changes.version();
            assertThat(afterOne).as("a link was added").isGreaterThan(start);
            assertThat(changes.version()).isEqualTo(afterOne);
            // Far more announcements than its 64 KiB queue holds: the overrun must count as a change.
            for (int i = 0; i < 60; i++) {
                rt.createVeth("gx" + i, null, "gy" + i, null, null, null);
            }
            assertThat(changes.version()).as("after an overrun").isGreaterThan(afterOne);
            rt.addAddress("gw0", Prefix.parse("192.0.2.9/24"));
            long beforeAddress = changes.version();
            rt.deleteAddress("gw0", Prefix.parse("192.0.2.9/24"));
            assertThat(changes.version()).as("an address was removed").isGreaterThan(beforeAddress);
        }
    }

    /** procfs reports size 0; a whole multi-value key must come back, as cat shows it. */
    @Test
    void aSysctlIsReadWhole(NetworkNamespace a) {
        Oracle.in(a, "sh", "-c", "echo 40000 40999 > /proc/sys/net/ipv4/ip_local_port_range");
        assertThat(new Sysctls(a).read("ipv4/ip_local_port_range"))
                .isEqualTo(Oracle.in(a, "cat", "/proc/sys/net/ipv4/ip_local_port_range").strip())
                .isEqualTo("40000\t40999");
    }

    @Test
    void bridgeMacNeverFloatsWhenPortsWithLowerMacsComeAndGo(NetworkNamespace a) {
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            rt.createBridge("gbr0", BRIDGE_MAC, null);
            rt.setUp("gbr0", true);
            assertThat(sysfs(a, "gbr0", "addr_assign_type")).isEqualTo("3");
            for (int i = 1; i <= 3; i++) {
                rt.createVeth("gp" + i, MacAddress.parse("02:00:00:00:00:0" + i), "gq" + i, null, null, null);
                rt.setMaster("gp" + i, "gbr0");
                rt.setUp("gp" + i, true);
            }
            assertThat(sysfs(a, "gbr0", "address")).isEqualTo(BRIDGE_MAC.toString());
            assertThat(rt.links().stream().filter(l -> l.master() == rt.link("gbr0").index())).hasSize(3);
            for (int i = 1; i <= 3; i++) {
                rt.delete("gp" + i);
            }
            assertThat(sysfs(a, "gbr0", "address")).isEqualTo(BRIDGE_MAC.toString());
            assertThat(rt.link("gbr0").mac()).isEqualTo(BRIDGE_MAC);
        }
    }

    @Test
    void controlBridgeWithoutMacTakesItsPortsLowerMac(NetworkNamespace a) {
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            rt.createBridgeWithoutMac("gbr0");
            String before = sysfs(a, "gbr0", "address");
            assertThat(sysfs(a, "gbr0", "addr_assign_type")).isNotEqualTo("3");
            rt.createVeth("gp1", MacAddress.parse("02:00:00:00:00:01"), "gq1", null, null, null);
            rt.setMaster("gp1", "gbr0");

            assertThat(sysfs(a, "gbr0", "address")).isEqualTo("02:00:00:00:00:01").isNotEqualTo(before);
        }
    }

    /**
     * The field report: a container talks through the bridge (its gateway) to a peer; a second
     * container with a lower MAC joins; the connection must keep working both ways.
     */
    @Test
    void connectionThroughTheBridgeSurvivesALowerMacJoining(NetworkNamespace host, NetworkNamespace c1,
                                                            NetworkNamespace c2, NetworkNamespace peer) throws Exception {
        assertThat(connectionSurvives(host, c1, c2, peer, true, Change.LOWER_MAC_JOINS)).isTrue();
        assertThat(sysfs(host, "gbr0", "address")).isEqualTo(BRIDGE_MAC.toString());
    }

    /** The same when the container with the lowest MAC leaves: the case that broke published connections. */
    @Test
    void connectionThroughTheBridgeSurvivesTheLowestMacLeaving(NetworkNamespace host, NetworkNamespace c1,
                                                               NetworkNamespace c2, NetworkNamespace peer) throws Exception {
        assertThat(connectionSurvives(host, c1, c2, peer, true, Change.LOWEST_MAC_LEAVES)).isTrue();
    }

    /**
     * The control, so the test above can fail: on a bridge created without a MAC, the bridge
     * took the lowest port's MAC; when that port leaves, the bridge's MAC moves and the
     * container, still sending to the old one, is cut off.
     */
    @Test
    void controlConnectionThroughAFloatingMacBridgeStallsWhenTheLowestMacLeaves(
            NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2, NetworkNamespace peer) throws Exception {
        assertThat(connectionSurvives(host, c1, c2, peer, false, Change.LOWEST_MAC_LEAVES)).isFalse();
    }

    private enum Change { LOWER_MAC_JOINS, LOWEST_MAC_LEAVES }

    private static boolean connectionSurvives(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2,
                                              NetworkNamespace peer, boolean fixedMac, Change change) throws Exception {
        var lowest = new ContainerInterface.Spec("gc2", MacAddress.parse("02:00:00:00:00:01"), "gbr0", false, c2, "eth0",
                null, List.of(Prefix.parse("10.77.0.3/24")), List.of(InetAddress.ofLiteral("10.77.0.1")), null);
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            if (fixedMac) {
                rt.createBridge("gbr0", BRIDGE_MAC, null);
            } else {
                rt.createBridgeWithoutMac("gbr0");
            }
            rt.addAddress("gbr0", Prefix.parse("10.77.0.1/24"));
            rt.setUp("gbr0", true);
            new Sysctls(host).setIpv4Forwarding(true);
            // The peer is routed behind the host.
            ContainerInterface.create(rt, new ContainerInterface.Spec("gpeer", null, null, false, peer, "eth0", null,
                    List.of(Prefix.parse("10.78.0.2/24")), List.of(InetAddress.ofLiteral("10.78.0.1")), null));
            rt.addAddress("gpeer", Prefix.parse("10.78.0.1/24"));
            if (change == Change.LOWEST_MAC_LEAVES) {
                ContainerInterface.create(rt, lowest);
            }
            ContainerInterface.create(rt, new ContainerInterface.Spec("gc1", MacAddress.parse("02:bb:00:00:00:01"),
                    "gbr0", false, c1, "eth0", MacAddress.parse("02:cc:00:00:00:01"),
                    List.of(Prefix.parse("10.77.0.2/24")), List.of(InetAddress.ofLiteral("10.77.0.1")), null));

            try (ServerSocketChannel server = Traffic.listen(peer, "10.78.0.2", 7000);
                 SocketChannel client = Traffic.connect(c1, "10.78.0.2", 7000);
                 SocketChannel accepted = server.accept()) {
                Traffic.roundTrip(client, accepted, "before");
                Traffic.roundTrip(accepted, client, "before-reply");

                if (change == Change.LOWER_MAC_JOINS) {
                    ContainerInterface.create(rt, lowest);
                } else {
                    rt.delete("gc2");
                }
                try {
                    Traffic.roundTrip(client, accepted, "after");
                    Traffic.roundTrip(accepted, client, "after-reply");
                    return true;
                } catch (IOException stalled) {
                    return false;
                }
            }
        }
    }

    @Test
    void vethPeerAppearsInTheContainerReadyAndTwoContainersTalk(NetworkNamespace host, NetworkNamespace c1,
                                                               NetworkNamespace c2) throws Exception {
        MacAddress mac = MacAddress.parse("02:cc:00:00:00:07");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createBridge("gbr0", BRIDGE_MAC, 1400);
            rt.addAddress("gbr0", Prefix.parse("10.77.0.1/24"));
            rt.setUp("gbr0", true);
            ContainerInterface.create(rt, new ContainerInterface.Spec("gc1", null, "gbr0", false, c1, "eth0", mac,
                    List.of(Prefix.parse("10.77.0.2/24")), List.of(InetAddress.ofLiteral("10.77.0.1")), 1400));
            ContainerInterface.create(rt, new ContainerInterface.Spec("gc2", null, "gbr0", false, c2, "eth1", null,
                    List.of(Prefix.parse("10.77.0.3/24")), List.of(InetAddress.ofLiteral("10.77.0.1")), 1400));

            assertThat(sysfs(host, "gc1", "brport/hairpin_mode")).isEqualTo("1");
            assertThat(sysfs(host, "gbr0", "mtu")).isEqualTo("1400");
        }
        assertThat(sysfs(c1, "eth0", "address")).isEqualTo(mac.toString());
        assertThat(sysfs(c1, "eth0", "operstate")).isEqualTo("up");
        assertThat(Oracle.in(c1, "ip", "-o", "-4", "addr", "show", "dev", "eth0")).contains("10.77.0.2/24");
        assertThat(Oracle.in(c1, "ip", "route", "show", "default")).contains("default via 10.77.0.1 dev eth0");
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("eth0");
        try (Rtnetlink inside = Rtnetlink.open(c1)) {
            assertThat(inside.link("eth0").mac()).isEqualTo(mac);
            assertThat(inside.addresses("eth0")).extracting(a -> a.prefix().toString()).contains("10.77.0.2/24");
            assertThat(inside.routes()).anySatisfy(r -> {
                assertThat(r.isDefault()).isTrue();
                assertThat(r.gateway()).isEqualTo(InetAddress.ofLiteral("10.77.0.1"));
            });
        }
        try (ServerSocketChannel server = Traffic.listen(c2, "10.77.0.3", 7001);
             SocketChannel client = Traffic.connect(c1, "10.77.0.3", 7001);
             SocketChannel accepted = server.accept()) {
            Traffic.roundTrip(client, accepted, "hello over the bridge");
        }
    }

    @Test
    void peerNameTakenInTheTargetFailsWithEexistAndLeavesNothing(NetworkNamespace host, NetworkNamespace c1) {
        Oracle.in(c1, "ip", "link", "add", "eth0", "type", "bridge");
        String hostLinksBefore = Oracle.in(host, "ip", "-o", "link", "show");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            NetlinkException e = Expect.thrown(NetlinkException.class,
                    () -> rt.createVeth("gc1", null, "eth0", null, c1, null));
            assertThat(e.isAlreadyExists()).as(e.getMessage()).isTrue();
            assertThat(e.getMessage()).contains("eth0").contains(c1.name());
        }
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).isEqualTo(hostLinksBefore).doesNotContain("gc1");
        assertThat(Oracle.in(c1, "ip", "-o", "link", "show")).contains("eth0").doesNotContain("veth");
        assertThat(Oracle.in(c1, "ip", "-o", "link", "show").lines()).hasSize(2);
    }

    @Test
    void failedLaterStepUndoesTheEarlierOnes(NetworkNamespace host, NetworkNamespace c1) {
        String hostLinksBefore = Oracle.in(host, "ip", "-o", "link", "show");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createBridge("gbr0", BRIDGE_MAC, null);
            // The gateway is not on the container's subnet: the route step fails after the veth exists.
            var spec = new ContainerInterface.Spec("gc1", null, "gbr0", false, c1, "eth0", null,
                    List.of(Prefix.parse("10.77.0.2/24")), List.of(InetAddress.ofLiteral("192.0.2.1")), null);
            NetlinkException e = Expect.thrown(NetlinkException.class, () -> ContainerInterface.create(rt, spec));
            assertThat(e.getMessage()).contains("default route via 192.0.2.1");
            rt.delete("gbr0");
        }
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).isEqualTo(hostLinksBefore);
        assertThat(Oracle.in(c1, "ip", "-o", "link", "show").lines()).hasSize(1); // only lo
    }

    @Test
    void dumpOfAThousandVethPairsHasThemAllWithTheirAttributes(NetworkNamespace a) {
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            for (int i = 0; i < 1000; i++) {
                rt.createVeth("va" + i, mac(i, 0xa), "vb" + i, mac(i, 0xb), null, 1000 + i % 400);
            }
            Map<String, Link> links = rt.links().stream().collect(Collectors.toMap(Link::name, Function.identity()));
            assertThat(links).hasSize(2001);
            for (int i = 0; i < 1000; i++) {
                Link l = links.get("va" + i);
                assertThat(l.kind()).isEqualTo("veth");
                assertThat(l.mac()).isEqualTo(mac(i, 0xa));
                assertThat(l.mtu()).isEqualTo(1000 + i % 400);
                assertThat(links.get("vb" + i).mac()).isEqualTo(mac(i, 0xb));
            }
        }
        assertThat(Oracle.in(a, "ip", "-o", "link", "show", "type", "veth").lines()).hasSize(2000);
    }

    private static MacAddress mac(int i, int side) {
        return MacAddress.parse(String.format("02:%02x:00:00:%02x:%02x", side, i >> 8, i & 0xff));
    }

    @Test
    void badInputIsRefusedNamingTheValueAndNothingChanges(NetworkNamespace a) {
        String before = Oracle.in(a, "ip", "-o", "link", "show");
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            // Names, MACs and prefixes are checked one value a row in RtnlInputChecksTest, without root;
            // here, that a request refuses them before it is sent.
            assertThatThrownBy(() -> rt.createBridge("a-name-longer-than-15", null, null))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("a-name-longer-than-15");
            assertThatThrownBy(() -> rt.createBridge("gbr0", null, 20))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("MTU 20");
            rt.createBridge("gbr0", BRIDGE_MAC, null);
            rt.addAddress("gbr0", Prefix.parse("10.77.0.1/24"));
            rt.setUp("gbr0", true);
            NetlinkException e = Expect.thrown(NetlinkException.class,
                    () -> rt.addDefaultRoute(InetAddress.ofLiteral("192.0.2.99"), "gbr0"));
            assertThat(e.getMessage()).contains("default route via 192.0.2.99").contains("ENETUNREACH");
            assertThat(rt.routes()).noneMatch(Route::isDefault);
            rt.delete("gbr0");
        }
        assertThat(Oracle.in(a, "ip", "-o", "link", "show")).isEqualTo(before);
    }

    @Test
    void sysctlsAreWrittenInsideTheNamespaceOnly(NetworkNamespace a) {
        String hostForward = Oracle.host("cat", "/proc/sys/net/ipv4/ip_forward").strip();
        Sysctls s = new Sysctls(a);
        s.setIpv4Forwarding(true);
        s.setIpv6Forwarding(true);
        s.setRouteLocalnet("lo", true);
        s.setAcceptRouterAdvertisements("lo", 2);
        s.setIpv6Disabled("lo", true);
        assertThat(Oracle.in(a, "sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo("1");
        assertThat(Oracle.in(a, "sysctl", "-n", "net.ipv6.conf.all.forwarding").strip()).isEqualTo("1");
        assertThat(Oracle.in(a, "sysctl", "-n", "net.ipv4.conf.lo.route_localnet").strip()).isEqualTo("1");
        assertThat(Oracle.in(a, "sysctl", "-n", "net.ipv6.conf.lo.accept_ra").strip()).isEqualTo("2");
        assertThat(Oracle.in(a, "sysctl", "-n", "net.ipv6.conf.lo.disable_ipv6").strip()).isEqualTo("1");
        assertThat(s.read("ipv4/ip_forward")).isEqualTo("1");
        assertThat(Oracle.host("cat", "/proc/sys/net/ipv4/ip_forward").strip()).isEqualTo(hostForward);
        assertThatThrownBy(() -> s.setRouteLocalnet("../all", true)).isInstanceOf(InvalidInputException.class);
    }

    @Test
    void linkOperationsAreVisibleToIproute2(NetworkNamespace a, NetworkNamespace b) {
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            rt.createBridge("gbr0", BRIDGE_MAC, null);
            rt.createVeth("gv0", null, "gv1", null, null, null);
            rt.setMaster("gv0", "gbr0");
            rt.setBridgePortFlags("gv0", true, true);
            assertThat(sysfs(a, "gv0", "brport/isolated")).isEqualTo("1");
            rt.setMtu("gv0", 1300);
            rt.setAlias("gv0", "gatun:net=n1");
            assertThat(rt.link("gv0").alias()).isEqualTo("gatun:net=n1");
            rt.rename("gv1", "gv9");
            rt.setMaster("gv0", null);
            assertThat(rt.link("gv0").master()).isZero();
            rt.moveTo("gv9", b);
            assertThat(rt.find("gv9")).isEmpty();
            assertThat(rt.find(rt.link("gv0").index())).map(Link::name).contains("gv0");
            Prefix v6 = Prefix.parse("fd00:77::1/64");
            rt.addAddress("gbr0", v6);
            assertThat(rt.addresses("gbr0")).extracting(InterfaceAddress::prefix).contains(v6);
            rt.deleteAddress("gbr0", v6);
            assertThat(rt.addresses("gbr0")).extracting(InterfaceAddress::prefix).doesNotContain(v6);
            rt.setUp("gbr0", true);
            rt.addAddress("gbr0", Prefix.parse("10.77.0.1/24"));
            rt.addRoute(Prefix.parse("10.99.0.0/16"), InetAddress.ofLiteral("10.77.0.254"), "gbr0");
            assertThat(Oracle.in(a, "ip", "route")).contains("10.99.0.0/16 via 10.77.0.254 dev gbr0");
            rt.deleteRoute(Prefix.parse("10.99.0.0/16"), InetAddress.ofLiteral("10.77.0.254"), "gbr0");
            assertThat(Oracle.in(a, "ip", "route")).doesNotContain("10.99.0.0/16");
        }
        assertThat(Oracle.in(a, "ip", "-o", "link", "show", "gv0")).contains("mtu 1300");
        assertThat(Oracle.in(b, "ip", "-o", "link", "show")).contains("gv9");
    }

    /**
     * The dummy driver is a module that not every kernel has (this one's CI kernel lacks it). The
     * real ip says first whether this kernel makes one; gatun must then do the same, or refuse it
     * by name with EOPNOTSUPP and leave nothing.
     */
    @Test
    void dummyIsCreatedWhereIpCanAndRefusedByNameWhereItCannot(NetworkNamespace a) {
        boolean kernelHasDummy = Oracle.tryIn(a, "ip", "link", "add", "gprobe0", "type", "dummy").exitCode() == 0;
        if (kernelHasDummy) {
            Oracle.in(a, "ip", "link", "del", "gprobe0");
        }
        try (Rtnetlink rt = Rtnetlink.open(a)) {
            if (kernelHasDummy) {
                Link d = rt.createDummy("gdummy0", MacAddress.parse("02:dd:00:00:00:01"));
                assertThat(d.kind()).isEqualTo("dummy");
                assertThat(d.mac()).isEqualTo(MacAddress.parse("02:dd:00:00:00:01"));
                assertThat(Oracle.in(a, "ip", "-o", "link", "show", "gdummy0")).contains("02:dd:00:00:00:01");
            } else {
                NetlinkException e = Expect.thrown(NetlinkException.class,
                        () -> rt.createDummy("gdummy0", MacAddress.parse("02:dd:00:00:00:01")));
                assertThat(e.isNotSupported()).as(e.getMessage()).isTrue();
                assertThat(e.getMessage()).contains("create dummy gdummy0");
                assertThat(rt.find("gdummy0")).isEmpty();
            }
        }
    }
}
