package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static dev.gatun.testing.Specs.ports;
import static dev.gatun.testing.Specs.withNetwork;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

/** Owners, conflicts, lifecycle and input checks of the driver contract, for every driver (see the subclasses). */
@ExtendWith(FreshNamespaces.class)
abstract class DriverContractSuite {

    /** The driver under test, for the namespace that plays the host. */
    abstract GatunDriver open(NetworkNamespace host);

    /** The firewall's state as its own tool prints it, to compare before and after. */
    abstract String firewallState(NetworkNamespace host);

    /** Whether the firewall holds rules or entries for this bridge. */
    abstract boolean firewallKnowsBridge(NetworkNamespace host, String bridge);

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");


    @Test
    void secondOwnerGetsAConflictNamingTheHolderAndNothingChanges(NetworkNamespace host) {
        try (GatunDriver gatun = withNetwork(open(host))) {
            gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            String before = firewallState(host);

            ConflictException e = Expect.thrown(ConflictException.class,
                    () -> gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.3"), ports("8081:81", "8080:80"), "bob")));

            assertThat(e.getMessage()).contains("8080/tcp").contains("alice");
            assertThat(firewallState(host)).isEqualTo(before);

            // The same mapping again by its owner changes nothing.
            gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            assertThat(firewallState(host)).isEqualTo(before);

            ConflictException refused = Expect.thrown(ConflictException.class,
                    () -> gatun.unpublish(new PortRequest("n1", C1, ports("8080:80"), "bob")));
            assertThat(refused.getMessage()).contains("alice").contains("bob");
            assertThat(firewallState(host)).isEqualTo(before);

            assertThat(gatun.unpublish(new PortRequest("n1", C1, List.of(), "alice"))).hasSize(1);
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
        try (GatunDriver gatun = withNetwork(open(host))) {
            String before = firewallState(host);
            try (ServerSocketChannel tcp = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                    .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 8080)));
                 DatagramChannel udp = host.call(() -> DatagramChannel.open(StandardProtocolFamily.INET)
                         .bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 5353)))) {
                ConflictException e = Expect.thrown(ConflictException.class,
                        () -> gatun.publish(new PortRequest("n1", C1, ports("8081:81", "8080:80"), "alice")));
                assertThat(e.getMessage()).contains("*:8080/tcp").contains("java " + me).contains("[::]:8080");
                ConflictException onAddress = Expect.thrown(ConflictException.class,
                        () -> gatun.publish(new PortRequest("n1", C1, ports("127.0.0.1:8080:80"), "alice")));
                assertThat(onAddress.getMessage()).contains("127.0.0.1:8080/tcp");
                ConflictException u = Expect.thrown(ConflictException.class,
                        () -> gatun.publish(new PortRequest("n1", C1, ports("5353:53/udp"), "alice")));
                assertThat(u.getMessage()).contains("*:5353/udp").contains("127.0.0.1:5353/udp").contains(me);
                assertThat(firewallState(host)).isEqualTo(before);
                assertThat(gatun.published("n1")).isEmpty();

                // Another port, or the same port of another protocol or family, is free.
                gatun.publish(new PortRequest("n1", C1, ports("8081:81", "8080:80/udp", "127.0.0.2:5353:53/udp"), "alice"));
                // SKIP: the caller reserved the port itself.
                assertThat(gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"), HostPortCheck.SKIP)).hasSize(1);
                // Published already: the same mapping again is no new claim.
                gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
                assertThat(gatun.hostPortsInUse()).singleElement().asString()
                        .contains("*:8080/tcp").contains("alice").contains("java " + me);
            }
            assertThat(gatun.hostPortsInUse()).isEmpty();
            assertThat(gatun.unpublish(new PortRequest("n1", C1, List.of(), "alice"))).hasSize(4);
            gatun.publish(new PortRequest("n1", C1, ports("5353:53/udp"), "alice"));
        }
    }

    @Test
    void addressBoundAndWildcardMappingsOfTheSamePortAreOneOwners(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "add", "gout", "type", "bridge");
        Oracle.in(host, "ip", "addr", "add", "192.0.2.1/24", "dev", "gout");
        try (GatunDriver gatun = withNetwork(open(host))) {
            gatun.publish(new PortRequest("n1", C1, ports("192.0.2.1:8080:80"), "alice"));
            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "bob")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
            gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            assertThat(gatun.published("n1")).hasSize(2);
        }
        Oracle.in(host, "ip", "link", "del", "gout");
    }

    @Test
    void aFreshInstanceListsTheSameFromTheKernel(NetworkNamespace host, NetworkNamespace c1) {
        Network made;
        Endpoint attached;
        List<PortMapping> published;
        try (GatunDriver gatun = withNetwork(open(host))) {
            made = gatun.network("n1");
            attached = gatun.attach(EndpointSpec.of("n1", c1));
            published = gatun.publish(new PortRequest("n1", attached.ip(), ports("8080:80", "53:53/udp"), null));
        }
        try (GatunDriver fresh = open(host)) {
            assertThat(fresh.networks()).containsExactly(made);
            assertThat(fresh.endpoints("n1")).containsExactly(attached);
            assertThat(fresh.published("n1")).containsExactlyInAnyOrderElementsOf(published);
        }
    }

    @Test
    void networkOptionsAndLifecycle(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        try (GatunDriver gatun = open(host)) {
            Network n = gatun.createNetwork(NetworkSpec.named("iso").bridge("gbr-iso").subnet4(Prefix.parse("10.90.0.0/24"))
                    .mtu(1400).icc(false).internal(true).masquerade(false).build());
            // Each option is checked on its own: one that is lost does not hide the others.
            assertSoftly(soft -> {
                soft.assertThat(n.bridge()).isEqualTo("gbr-iso");
                soft.assertThat(n.gateways()).containsExactly(InetAddress.ofLiteral("10.90.0.1"));
                soft.assertThat(n.icc()).as("icc").isFalse();
                soft.assertThat(n.internal()).as("internal").isTrue();
                soft.assertThat(n.masquerade()).as("masquerade").isFalse();
                soft.assertThat(Oracle.in(host, "cat", "/sys/class/net/gbr-iso/addr_assign_type").strip()).isEqualTo("3");
                soft.assertThat(Oracle.in(host, "cat", "/sys/class/net/gbr-iso/mtu").strip()).isEqualTo("1400");
                soft.assertThat(n.mtu()).as("mtu").isEqualTo(1400);
                soft.assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo("1");
                soft.assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.conf.gbr-iso.route_localnet").strip()).isEqualTo("1");
                soft.assertThat(firewallKnowsBridge(host, "gbr-iso")).isTrue();
            });

            Endpoint e1 = gatun.attach(EndpointSpec.of("iso", c1));
            Endpoint e2 = gatun.attach(EndpointSpec.on("iso").container(c2).ifname("eth1")
                    .ip(InetAddress.ofLiteral("10.90.0.7")).owner("ctr-2").build());
            assertSoftly(soft -> {
                soft.assertThat(e1.ip()).isEqualTo(InetAddress.ofLiteral("10.90.0.2"));
                soft.assertThat(e2.ip()).isEqualTo(InetAddress.ofLiteral("10.90.0.7"));
                soft.assertThat(Oracle.in(host, "cat", "/sys/class/net/" + e1.hostIfname() + "/brport/isolated").strip())
                        .isEqualTo("1");
                soft.assertThat(Oracle.in(c2, "cat", "/sys/class/net/eth1/mtu").strip()).isEqualTo("1400");
                soft.assertThat(gatun.endpoints("iso")).extracting(Endpoint::owner)
                        .containsExactlyInAnyOrder("10.90.0.2", "ctr-2");
            });

            gatun.publish(new PortRequest("iso", e2.ip(), ports("8080:80"), null));
            assertThatThrownBy(() -> gatun.deleteNetwork("iso", false)).isInstanceOf(ConflictException.class)
                    .hasMessageContaining("2 endpoints attached (").hasMessageContaining("ctr-2 at 10.90.0.7")
                    .hasMessageContaining("10.90.0.2 at 10.90.0.2").hasMessageContaining("with force");
            gatun.detach("iso", c2, "eth1");
            assertThat(gatun.published("iso")).isEmpty();
            assertThat(Oracle.in(c2, "ip", "-o", "link", "show")).doesNotContain("eth1");

            gatun.deleteNetwork("iso", true);
            assertThat(gatun.networks()).isEmpty();
            assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gbr-iso").doesNotContain(e1.hostIfname());
            assertThat(firewallKnowsBridge(host, "gbr-iso")).isFalse();
        }
    }

    /** A call the driver must refuse before it changes anything, and what the refusal must name. */
    record BadCall(String what, Consumer<GatunDriver> call, Class<? extends RuntimeException> refusal,
                   List<String> named) {
        @Override
        public String toString() {
            return what;
        }
    }

    static Stream<BadCall> badCalls() {
        return Stream.of(
                new BadCall("an IPv6 host address for an IPv4 container",
                        d -> d.publish(new PortRequest("n1", C1, ports("[::1]:8080:80"), null)),
                        InvalidInputException.class, List.of("::1", "family")),
                new BadCall("a container address outside the network",
                        d -> d.publish(new PortRequest("n1", InetAddress.ofLiteral("10.99.0.2"), ports("8080:80"), null)),
                        InvalidInputException.class, List.of("10.99.0.2", "outside")),
                new BadCall("an owner with a newline",
                        d -> d.publish(new PortRequest("n1", C1, ports("8080:80"), "bad\nowner")),
                        InvalidInputException.class, List.of("bad?owner")),
                new BadCall("a network that does not exist",
                        d -> d.publish(new PortRequest("nope", C1, ports("8080:80"), null)),
                        NotFoundException.class, List.of("nope")),
                new BadCall("a network name with a slash",
                        d -> d.createNetwork(NetworkSpec.of("bad/name", Prefix.parse("10.1.0.0/16"))),
                        InvalidInputException.class, List.of("bad/name")),
                new BadCall("a subnet inside another network's",
                        d -> d.createNetwork(NetworkSpec.of("n2", Prefix.parse("10.88.5.0/24"))),
                        ConflictException.class, List.of("overlaps", "n1")),
                new BadCall("a gateway outside the subnet",
                        d -> d.createNetwork(NetworkSpec.named("n2").subnet4(Prefix.parse("10.1.0.0/16"))
                                .gateway4(InetAddress.ofLiteral("10.2.0.1")).build()),
                        InvalidInputException.class, List.of("10.2.0.1", "10.1.0.0/16")),
                new BadCall("an IPv4 subnet given as the IPv6 one",
                        d -> d.createNetwork(NetworkSpec.named("n2").subnet4(Prefix.parse("10.1.0.0/16"))
                                .subnet6(Prefix.parse("10.2.0.0/16")).build()),
                        InvalidInputException.class, List.of("10.2.0.0/16", "IPv6")),
                new BadCall("an endpoint address outside the network",
                        d -> d.attach(EndpointSpec.on("n1").ip(InetAddress.ofLiteral("10.99.0.9")).build()),
                        InvalidInputException.class, List.of("10.99.0.9")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badCalls")
    void badInputIsRefusedNamingTheValueAndNothingChanges(BadCall bad, NetworkNamespace host) {
        try (GatunDriver gatun = withNetwork(open(host))) {
            String before = firewallState(host);
            String links = Oracle.in(host, "ip", "-o", "link", "show");

            Throwable refused = catchThrowable(() -> bad.call().accept(gatun));

            assertThat(refused).isInstanceOf(bad.refusal());
            for (String named : bad.named()) {
                assertThat(refused).hasMessageContaining(named);
            }
            assertThat(firewallState(host)).isEqualTo(before);
            assertThat(Oracle.in(host, "ip", "-o", "link", "show")).isEqualTo(links);
            assertThat(gatun.networks()).extracting(Network::name).containsExactly("n1");
        }
    }

    /** A driver keeps network lookups until the kernel announces a link change: a deletion elsewhere is seen at once. */
    @Test
    void aNetworkDeletedByAnotherInstanceIsSeenAsGone(NetworkNamespace host) {
        try (GatunDriver first = withNetwork(open(host)); GatunDriver second = open(host)) {
            second.publish(new PortRequest("n1", C1, ports("8080:80"), null));
            second.publish(new PortRequest("n1", C1, ports("8090:80"), null));
            first.deleteNetwork("n1", true);
            assertThatThrownBy(() -> second.publish(new PortRequest("n1", C1, ports("8081:80"), null)))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("n1");
            first.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.77.0.0/24")));
            assertThatThrownBy(() -> second.publish(new PortRequest("n1", C1, ports("8082:80"), null)))
                    .as("the recreated network's new subnet is seen, not the cached one")
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("10.88.0.2");
        }
    }

    /** A host address added after a driver cached the addresses still counts for the wildcard overlap check. */
    @Test
    void aHostAddressAddedLaterCountsForOverlaps(NetworkNamespace host) {
        Oracle.in(host, "ip", "link", "add", "gout", "type", "bridge");
        try (GatunDriver first = withNetwork(open(host)); GatunDriver second = open(host)) {
            second.publish(new PortRequest("n1", C1, ports("8080:80"), "bob"));
            // A second call, so that the driver watches for changes and keeps what it read.
            second.publish(new PortRequest("n1", C1, ports("8090:80"), "bob"));
            Oracle.in(host, "ip", "addr", "add", "192.0.2.1/24", "dev", "gout");
            first.publish(new PortRequest("n1", C1, ports("192.0.2.1:8081:80"), "alice"));
            assertThatThrownBy(() -> second.publish(new PortRequest("n1", C1, ports("8081:80"), "bob")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("alice");
        } finally {
            Oracle.in(host, "ip", "link", "del", "gout");
        }
    }

    /** For an engine that moves the interface itself (Docker): the container end waits in the host namespace. */
    @Test
    void anEndpointHandedOverStaysInTheHostUntilTheEngineTakesIt(NetworkNamespace host) {
        try (GatunDriver gatun = withNetwork(open(host))) {
            MacAddress mac = MacAddress.parse("02:42:0a:58:00:07");
            // No container: the engine moves the interface itself.
            Endpoint e = gatun.attach(EndpointSpec.on("n1").ip(InetAddress.ofLiteral("10.88.0.7")).mac(mac).owner("ep-1")
                    .build());
            assertThat(e.containerNamespace()).isNull();
            assertThat(e.ifname()).startsWith("gc");
            String peer = Oracle.in(host, "ip", "-o", "link", "show", e.ifname());
            assertThat(peer).contains("state DOWN").contains(mac.toString());
            assertThat(Oracle.in(host, "ip", "-o", "addr", "show", e.ifname())).doesNotContain("inet ");
            String hostEnd = Oracle.in(host, "ip", "-d", "-o", "link", "show", e.hostIfname());
            assertThat(hostEnd).contains("master gatun-n1").contains("hairpin on");
            assertThat(gatun.endpoints("n1")).containsExactly(e);
            gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80"), "ep-1"));

            assertThatThrownBy(() -> gatun.detachOwner("n1", "ep-2"))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("ep-2");
            gatun.detachOwner("n1", "ep-1");
            assertThat(gatun.endpoints("n1")).isEmpty();
            assertThat(gatun.published("n1")).isEmpty();
            assertThat(Oracle.tryIn(host, "ip", "link", "show", e.ifname()).exitCode()).isNotZero();
        }
    }

    /** The addresses of a dual-stack network's container 10.90.1.2 and fd00:90:1::2, with {@code specs} each. */
    static Map<InetAddress, List<PortSpec>> bothFamilies(String... specs) {
        Map<InetAddress, List<PortSpec>> both = new LinkedHashMap<>();
        both.put(Prefix.address("10.90.1.2"), ports(specs));
        both.put(Prefix.address("fd00:90:1::2"), ports(specs));
        return both;
    }

    static Network dualStack(GatunDriver gatun) {
        return gatun.createNetwork(dualStackSpec());
    }

    static NetworkSpec dualStackSpec() {
        return NetworkSpec.named("dual").subnet4(Prefix.parse("10.90.1.0/24")).subnet6(Prefix.parse("fd00:90:1::/64"))
                .build();
    }

    /** The firewall's state line by line, sorted: the same entries made in another order read the same. */
    private String sortedState(NetworkNamespace host) {
        return firewallState(host).lines().map(String::strip).sorted().collect(java.util.stream.Collectors.joining("\n"));
    }

    /**
     * A network made for its first container's ports that never came (its setup died first) is
     * removed whole, with gatun's table made or not, and leaves the firewall as it was.
     */
    @Test
    void aNetworkMadeForPortsThatNeverCameIsRemovedWhole(NetworkNamespace host) {
        try (GatunDriver gatun = open(host)) {
            // A network made and removed first: what iptables leaves of its own (empty built-in chains) is there.
            gatun.createNetwork(Specs.n1());
            gatun.deleteNetwork("n1", false);
            String before = firewallState(host);
            gatun.createNetworkForPublish(dualStackSpec());
            gatun.deleteNetwork("dual", false);
            assertThat(firewallState(host)).isEqualTo(before);

            gatun.createNetwork(Specs.n1());
            String withAnother = firewallState(host);
            gatun.createNetworkForPublish(dualStackSpec());
            gatun.deleteNetwork("dual", false);
            assertThat(firewallState(host)).isEqualTo(withAnother);
            assertThat(gatun.networks()).extracting(Network::name).containsExactly("n1");
        }
    }

    /**
     * A network made at its first container's setup (CNI, netavark), whose packet-filter entries
     * wait for that container's ports, ends as one made by createNetwork: once the ports are
     * published, once they are refused, and, should the publish never come, once it is completed
     * (twice: nothing doubles). Each compared with the same steps on a network made by createNetwork.
     */
    @Test
    void aNetworkMadeForItsFirstContainersPortsEndsAsAnyOther(NetworkNamespace host) {
        InetAddress other = Prefix.address("10.90.1.3");
        List<Consumer<GatunDriver>> portsOfItsFirstContainer = List.of(
                g -> g.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP),
                g -> {
                    g.publish(new PortRequest("dual", other, ports("8080:80"), "other"), HostPortCheck.SKIP);
                    assertThatThrownBy(() -> g.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP))
                            .isInstanceOf(ConflictException.class).hasMessageContaining("other");
                },
                g -> {
                    g.completeNetwork("dual");
                    g.completeNetwork("dual");
                });
        try (GatunDriver gatun = open(host)) {
            for (Consumer<GatunDriver> first : portsOfItsFirstContainer) {
                dualStack(gatun);
                first.accept(gatun);
                String asAnyOther = sortedState(host);
                gatun.deleteNetwork("dual", true);

                gatun.createNetworkForPublish(dualStackSpec());
                first.accept(gatun);
                assertThat(sortedState(host)).isEqualTo(asAnyOther);
                assertThat(firewallKnowsBridge(host, NetworkSpec.defaultBridge("dual"))).isTrue();
                gatun.deleteNetwork("dual", true);
            }
        }
    }

    /**
     * A plain publish to a network made for its ports (on nftables, before gatun's table is),
     * while the same driver removes that network: see {@link #againstRemoval}.
     */
    @Test
    void aPublishWhileItsNetworkMadeForPortsIsRemovedLeavesNothing(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = open(host)) {
            againstRemoval(host, gatun, () -> gatun.createNetworkForPublish(dualStackSpec()),
                    () -> gatun.publish(new PortRequest("dual", Prefix.address("10.90.1.2"), ports("8080:80"), "c1"), HostPortCheck.SKIP));
        }
    }

    /**
     * The same with a container's ports as the engine adapters publish them: on nftables the
     * network's own entries and gatun's table ride in their transaction, which would make them
     * all again after the removal.
     */
    @Test
    void aFirstContainersPortsWhileItsNetworkIsRemovedLeaveNothing(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = open(host)) {
            againstRemoval(host, gatun, () -> gatun.createNetworkForPublish(dualStackSpec()),
                    () -> gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80"), "c1"), HostPortCheck.SKIP));
        }
    }

    /**
     * A publish to a whole network while it is removed, another network keeping the firewall's
     * chains or table: a commit after the removal finds all it needs there, and would leave its
     * mapping to an address of no network.
     */
    @Test
    void aPublishWhileItsNetworkIsRemovedBesideAnotherLeavesNothingOfIt(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(Specs.n1());
            againstRemoval(host, gatun, () -> dualStack(gatun),
                    () -> gatun.publish(new PortRequest("dual", Prefix.address("10.90.1.2"), ports("8080:80"), "c1"), HostPortCheck.SKIP));
            assertThat(gatun.networks()).extracting(Network::name).containsExactly("n1");
        }
    }

    /**
     * Twenty rounds of: {@code make} a network "dual", then {@code publish} to it on one thread
     * while another removes it, both let go at once. The publish either went in before the
     * removal, which took it, or is refused as not found; either way the firewall is as it was
     * before the round, and the network is gone.
     */
    private void againstRemoval(NetworkNamespace host, GatunDriver gatun, Runnable make,
                                java.util.concurrent.Callable<?> publish) throws Exception {
        // A network made and removed first: what iptables leaves of its own (empty built-in chains) is there.
        make.run();
        gatun.deleteNetwork("dual", true);
        try (java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2)) {
            for (int round = 0; round < 20; round++) {
                String before = sortedState(host);
                make.run();
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                var published = pool.submit(() -> {
                    start.await();
                    return publish.call();
                });
                var removed = pool.submit(() -> {
                    start.await();
                    gatun.deleteNetwork("dual", true);
                    return null;
                });
                removed.get(60, java.util.concurrent.TimeUnit.SECONDS);
                try {
                    published.get(60, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    assertThat(e.getCause()).as("round %d", round).isInstanceOf(NotFoundException.class);
                }
                assertThat(sortedState(host)).as("round %d", round).isEqualTo(before);
                assertThat(gatun.networks()).as("round %d", round).extracting(Network::name).doesNotContain("dual");
            }
        }
    }

    /**
     * A container's ports on both of its addresses as one request: a port of one family held by
     * another owner refuses all of them, the other family's included; then they all go in.
     */
    @Test
    void aContainersPortsOnBothFamiliesArePublishedAllOrNone(NetworkNamespace host) {
        try (GatunDriver gatun = open(host)) {
            dualStack(gatun);
            InetAddress v6 = Prefix.address("fd00:90:1::2");
            gatun.publish(new PortRequest("dual", Prefix.address("fd00:90:1::3"), ports("9090:90"), "other"), HostPortCheck.SKIP);
            assertThatThrownBy(() -> gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80", "9090:90"), "c1"), HostPortCheck.SKIP))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("9090");
            assertThat(gatun.published("dual")).as("nothing of c1, not even its IPv4 ports").extracting(PortMapping::owner)
                    .containsOnly("other");

            gatun.unpublish(new PortRequest("dual", Prefix.address("fd00:90:1::3"), List.of(), "other"));
            List<PortMapping> made = gatun.publishAll(new PortsByAddress("dual", bothFamilies("8080:80", "9090:90"), "c1"), HostPortCheck.SKIP);
            assertThat(made).extracting(m -> m.hostPort() + " " + m.containerIp().getHostAddress()).containsExactlyInAnyOrder(
                    "8080 10.90.1.2", "9090 10.90.1.2", "8080 " + v6.getHostAddress(), "9090 " + v6.getHostAddress());
            assertThat(gatun.published("dual")).hasSize(4);

            assertThatThrownBy(() -> gatun.publishAll(new PortsByAddress("dual", Map.of(v6, List.of()), "c1"), HostPortCheck.SKIP))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("no ports given");
            Map<InetAddress, List<PortSpec>> outside = bothFamilies("7070:70");
            outside.put(Prefix.address("10.1.1.1"), ports("7071:71"));
            assertThatThrownBy(() -> gatun.publishAll(new PortsByAddress("dual", outside, "c1"), HostPortCheck.SKIP))
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("10.1.1.1");
            assertThat(gatun.published("dual")).as("nothing of a refused request").hasSize(4);
            assertThatThrownBy(() -> gatun.publishAll(new PortsByAddress("dual", bothFamilies("7070:70"), null), HostPortCheck.SKIP))
                    .as("one request, one owner: not one per address").isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("needs an owner");
            assertThat(gatun.publishAll(new PortsByAddress("dual", Map.of(v6, ports("7070:70")), null), HostPortCheck.SKIP))
                    .extracting(PortMapping::owner).as("one address names its own, as publish does")
                    .containsExactly(PortMapping.ownerOr(null, v6));
        }
    }
}
