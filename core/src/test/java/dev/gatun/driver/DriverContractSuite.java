package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Owners, conflicts, lifecycle and input checks of the driver contract, for every driver (see the subclasses). */
@ExtendWith(FreshNamespaces.class)
abstract class DriverContractSuite {

    /** The driver under test, for the namespace that plays the host. */
    abstract NetworkDriver open(NetworkNamespace host);

    /** The firewall's state as its own tool prints it, to compare before and after. */
    abstract String firewallState(NetworkNamespace host);

    /** Whether the firewall holds rules or entries for this bridge. */
    abstract boolean firewallKnowsBridge(NetworkNamespace host, String bridge);

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");

    private static List<PortSpec> ports(String... specs) {
        return java.util.Arrays.stream(specs).map(PortSpec::parse).toList();
    }

    private NetworkDriver withNetwork(NetworkNamespace host) {
        NetworkDriver gatun = open(host);
        gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
        return gatun;
    }

    @Test
    void secondOwnerGetsAConflictNamingTheHolderAndNothingChanges(NetworkNamespace host) {
        try (NetworkDriver gatun = withNetwork(host)) {
            gatun.publish("n1", C1, ports("8080:80"), "alice");
            String before = firewallState(host);

            ConflictException e = Expect.thrown(ConflictException.class,
                    () -> gatun.publish("n1", InetAddress.ofLiteral("10.88.0.3"), ports("8081:81", "8080:80"), "bob"));

            assertThat(e.getMessage()).contains("8080/tcp").contains("alice");
            assertThat(firewallState(host)).isEqualTo(before);

            // The same mapping again by its owner changes nothing.
            gatun.publish("n1", C1, ports("8080:80"), "alice");
            assertThat(firewallState(host)).isEqualTo(before);

            ConflictException refused = Expect.thrown(ConflictException.class,
                    () -> gatun.unpublish("n1", C1, ports("8080:80"), "bob"));
            assertThat(refused.getMessage()).contains("alice").contains("bob");
            assertThat(firewallState(host)).isEqualTo(before);

            assertThat(gatun.unpublish("n1", C1, List.of(), "alice")).hasSize(1);
            assertThat(gatun.published("n1")).isEmpty();
        }
    }

    /**
     * A socket of the host on the port (a Java listener on [::], which takes IPv4 too; a UDP
     * socket on 127.0.0.1) makes a publish a conflict naming the port and this process, and
     * nothing changes; SKIP publishes anyway; a listener that comes later is reported.
     */
    @Test
    void aHostPortHeldByASocketOfTheHostIsRefusedNamingTheProcess(NetworkNamespace host) throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.setUp("lo", true);
        }
        String me = "(pid " + ProcessHandle.current().pid() + ")";
        try (NetworkDriver gatun = withNetwork(host)) {
            String before = firewallState(host);
            try (ServerSocketChannel tcp = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                    .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 8080)));
                 DatagramChannel udp = host.call(() -> DatagramChannel.open(StandardProtocolFamily.INET)
                         .bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 5353)))) {
                ConflictException e = Expect.thrown(ConflictException.class,
                        () -> gatun.publish("n1", C1, ports("8081:81", "8080:80"), "alice"));
                assertThat(e.getMessage()).contains("*:8080/tcp").contains("java " + me).contains("[::]:8080");
                ConflictException onAddress = Expect.thrown(ConflictException.class,
                        () -> gatun.publish("n1", C1, ports("127.0.0.1:8080:80"), "alice"));
                assertThat(onAddress.getMessage()).contains("127.0.0.1:8080/tcp");
                ConflictException u = Expect.thrown(ConflictException.class,
                        () -> gatun.publish("n1", C1, ports("5353:53/udp"), "alice"));
                assertThat(u.getMessage()).contains("*:5353/udp").contains("127.0.0.1:5353/udp").contains(me);
                assertThat(firewallState(host)).isEqualTo(before);
                assertThat(gatun.published("n1")).isEmpty();

                // Another port, or the same port of another protocol or family, is free.
                gatun.publish("n1", C1, ports("8081:81", "8080:80/udp", "127.0.0.2:5353:53/udp"), "alice");
                // SKIP: the caller reserved the port itself.
                assertThat(gatun.publish("n1", C1, ports("8080:80"), "alice", HostPortCheck.SKIP)).hasSize(1);
                // Published already: the same mapping again is no new claim.
                gatun.publish("n1", C1, ports("8080:80"), "alice");
                assertThat(gatun.hostPortsInUse()).singleElement().asString()
                        .contains("*:8080/tcp").contains("alice").contains("java " + me);
            }
            assertThat(gatun.hostPortsInUse()).isEmpty();
            assertThat(gatun.unpublish("n1", C1, List.of(), "alice")).hasSize(4);
            gatun.publish("n1", C1, ports("5353:53/udp"), "alice");
        }
    }

    @Test
    void addressBoundAndWildcardMappingsOfTheSamePortAreOneOwners(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "add", "gout", "type", "bridge");
        Oracle.in(host, "ip", "addr", "add", "192.0.2.1/24", "dev", "gout");
        try (NetworkDriver gatun = withNetwork(host)) {
            gatun.publish("n1", C1, ports("192.0.2.1:8080:80"), "alice");
            assertThatThrownBy(() -> gatun.publish("n1", C1, ports("8080:80"), "bob"))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            gatun.publish("n1", C1, ports("8080:80"), "alice");
            assertThat(gatun.published("n1")).hasSize(2);
        }
        Oracle.in(host, "ip", "link", "del", "gout");
    }

    @Test
    void aFreshInstanceListsTheSameFromTheKernel(NetworkNamespace host, NetworkNamespace c1) {
        Network made;
        Endpoint attached;
        List<PortMapping> published;
        try (NetworkDriver gatun = withNetwork(host)) {
            made = gatun.network("n1");
            attached = gatun.attach(EndpointSpec.of("n1", c1));
            published = gatun.publish("n1", attached.ip(), ports("8080:80", "53:53/udp"), null);
        }
        try (NetworkDriver fresh = open(host)) {
            assertThat(fresh.networks()).containsExactly(made);
            assertThat(fresh.endpoints("n1")).containsExactly(attached);
            assertThat(fresh.published("n1")).containsExactlyInAnyOrderElementsOf(published);
        }
    }

    @Test
    void networkOptionsAndLifecycle(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        try (NetworkDriver gatun = open(host)) {
            Network n = gatun.createNetwork(new NetworkSpec("iso", "gbr-iso", Prefix.parse("10.90.0.0/24"), null, null, null,
                    null, 1400, false, true, false));
            assertThat(n.bridge()).isEqualTo("gbr-iso");
            assertThat(n.gateways()).containsExactly(InetAddress.ofLiteral("10.90.0.1"));
            assertThat(Oracle.in(host, "cat", "/sys/class/net/gbr-iso/addr_assign_type").strip()).isEqualTo("3");
            assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo("1");
            assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.conf.gbr-iso.route_localnet").strip()).isEqualTo("1");
            assertThat(firewallKnowsBridge(host, "gbr-iso")).isTrue();

            Endpoint e1 = gatun.attach(EndpointSpec.of("iso", c1));
            Endpoint e2 = gatun.attach(new EndpointSpec("iso", c2, "eth1", InetAddress.ofLiteral("10.90.0.7"), null, null,
                    "ctr-2"));
            assertThat(e1.ip()).isEqualTo(InetAddress.ofLiteral("10.90.0.2"));
            assertThat(e2.ip()).isEqualTo(InetAddress.ofLiteral("10.90.0.7"));
            assertThat(Oracle.in(host, "cat", "/sys/class/net/" + e1.hostIfname() + "/brport/isolated").strip()).isEqualTo("1");
            assertThat(Oracle.in(c2, "cat", "/sys/class/net/eth1/mtu").strip()).isEqualTo("1400");
            assertThat(gatun.endpoints("iso")).extracting(Endpoint::owner).containsExactlyInAnyOrder("10.90.0.2", "ctr-2");

            gatun.publish("iso", e2.ip(), ports("8080:80"), null);
            assertThatThrownBy(() -> gatun.deleteNetwork("iso", false)).isInstanceOf(ConflictException.class)
                    .hasMessageContaining("2 endpoint");
            gatun.detach("iso", c2, "eth1");
            assertThat(gatun.published("iso")).isEmpty();
            assertThat(Oracle.in(c2, "ip", "-o", "link", "show")).doesNotContain("eth1");

            gatun.deleteNetwork("iso", true);
            assertThat(gatun.networks()).isEmpty();
            assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gbr-iso").doesNotContain(e1.hostIfname());
            assertThat(firewallKnowsBridge(host, "gbr-iso")).isFalse();
        }
    }

    @Test
    void badInputIsRefusedNamingTheValueAndNothingChanges(NetworkNamespace host) {
        try (NetworkDriver gatun = withNetwork(host)) {
            String before = firewallState(host);
            assertThatThrownBy(() -> PortSpec.parse("0:80")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("'0:80'").hasMessageContaining("port 0");
            assertThatThrownBy(() -> PortSpec.parse("65536:80")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("65536");
            assertThatThrownBy(() -> PortSpec.parse("8000-8010:80-81")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("different lengths");
            assertThatThrownBy(() -> PortSpec.parse("8010-8000:80")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("reversed");
            assertThatThrownBy(() -> PortSpec.parse("8080:80/icmp")).isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("'icmp'");
            assertThatThrownBy(() -> gatun.publish("n1", C1, ports("[::1]:8080:80"), null))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("::1").hasMessageContaining("family");
            assertThatThrownBy(() -> gatun.publish("n1", InetAddress.ofLiteral("10.99.0.2"), ports("8080:80"), null))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("10.99.0.2")
                    .hasMessageContaining("outside");
            assertThatThrownBy(() -> gatun.publish("n1", C1, ports("8080:80"), "bad\nowner"))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("bad?owner");
            assertThatThrownBy(() -> gatun.publish("nope", C1, ports("8080:80"), null))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("nope");
            assertThatThrownBy(() -> gatun.createNetwork(NetworkSpec.of("bad/name", Prefix.parse("10.1.0.0/16"))))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("bad/name");
            assertThatThrownBy(() -> gatun.createNetwork(NetworkSpec.of("n2", Prefix.parse("10.88.5.0/24"))))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("overlaps").hasMessageContaining("n1");
            assertThat(firewallState(host)).isEqualTo(before);
        }
    }

    /** A driver keeps network lookups until the kernel announces a link change: a deletion elsewhere is seen at once. */
    @Test
    void aNetworkDeletedByAnotherInstanceIsSeenAsGone(NetworkNamespace host) {
        try (NetworkDriver first = withNetwork(host); NetworkDriver second = open(host)) {
            second.publish("n1", C1, ports("8080:80"), null);
            second.publish("n1", C1, ports("8090:80"), null);
            first.deleteNetwork("n1", true);
            assertThatThrownBy(() -> second.publish("n1", C1, ports("8081:80"), null))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("n1");
            first.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.77.0.0/24")));
            assertThatThrownBy(() -> second.publish("n1", C1, ports("8082:80"), null))
                    .as("the recreated network's new subnet is seen, not the cached one")
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("10.88.0.2");
        }
    }

    /** A host address added after a driver cached the addresses still counts for the wildcard overlap check. */
    @Test
    void aHostAddressAddedLaterCountsForOverlaps(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "add", "gout", "type", "bridge");
        try (NetworkDriver first = withNetwork(host); NetworkDriver second = open(host)) {
            second.publish("n1", C1, ports("8080:80"), "bob");
            // A second call, so that the driver watches for changes and keeps what it read.
            second.publish("n1", C1, ports("8090:80"), "bob");
            Oracle.in(host, "ip", "addr", "add", "192.0.2.1/24", "dev", "gout");
            first.publish("n1", C1, ports("192.0.2.1:8081:80"), "alice");
            assertThatThrownBy(() -> second.publish("n1", C1, ports("8081:80"), "bob"))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
        } finally {
            Oracle.in(host, "ip", "link", "del", "gout");
        }
    }

    /** For an engine that moves the interface itself (Docker): the container end waits in the host namespace. */
    @Test
    void anEndpointHandedOverStaysInTheHostUntilTheEngineTakesIt(NetworkNamespace host) {
        try (NetworkDriver gatun = withNetwork(host)) {
            dev.gatun.rtnl.MacAddress mac = dev.gatun.rtnl.MacAddress.parse("02:42:0a:58:00:07");
            Endpoint e = gatun.attach(new EndpointSpec("n1", null, null, InetAddress.ofLiteral("10.88.0.7"), null, mac,
                    "ep-1"));
            assertThat(e.containerNamespace()).isNull();
            assertThat(e.ifname()).startsWith("gc");
            String peer = Oracle.in(host, "ip", "-o", "link", "show", e.ifname());
            assertThat(peer).contains("state DOWN").contains(mac.toString());
            assertThat(Oracle.in(host, "ip", "-o", "addr", "show", e.ifname())).doesNotContain("inet ");
            String hostEnd = Oracle.in(host, "ip", "-d", "-o", "link", "show", e.hostIfname());
            assertThat(hostEnd).contains("master gatun-n1").contains("hairpin on");
            assertThat(gatun.endpoints("n1")).containsExactly(e);
            gatun.publish("n1", e.ip(), ports("8080:80"), "ep-1");

            assertThatThrownBy(() -> gatun.detachOwner("n1", "ep-2"))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("ep-2");
            gatun.detachOwner("n1", "ep-1");
            assertThat(gatun.endpoints("n1")).isEmpty();
            assertThat(gatun.published("n1")).isEmpty();
            assertThat(Oracle.tryIn(host, "ip", "link", "show", e.ifname()).exitCode()).isNotZero();
        }
    }
}
