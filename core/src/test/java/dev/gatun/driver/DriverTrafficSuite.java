package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.SteadyUdpClient;
import dev.gatun.testing.UdpInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.time.Duration;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.Map;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real packets: an outside namespace joined to the host, containers attached through gatun,
 * servers listening in them. Every driver runs the same suite (see the subclasses).
 */
@ExtendWith(FreshNamespaces.class)
abstract class DriverTrafficSuite {

    /** The driver under test, for the namespace that plays the host. */
    abstract GatunDriver open(NetworkNamespace host);

    private static final String SUBNET = "10.88.0.0/16";

    private static NetworkSpec network(boolean withIpv6) {
        return NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET))
                .subnet6(withIpv6 ? Prefix.parse("fd00:88::/64") : null).build();
    }

    @Test
    void tcpAndUdpFromOutsideReachTheContainer(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(false));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            String ip = e.ip().getHostAddress();
            servers.tcp(c1, ip, 80, "c1-tcp").udp(c1, ip, 80, "c1-udp");

            gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80", "8080:80/udp", "8081:81/sctp"), null));

            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1-tcp");
            try (DatagramChannel client = ReplyServers.udpClient(outside)) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1-udp");
            }
            assertThat(gatun.published("n1")).extracting(m -> m.protocol() + " " + m.hostPort() + " " + m.containerPort())
                    .containsExactly("TCP 8080 80", "UDP 8080 80", "SCTP 8081 81");
        }
    }

    @Test
    void mappingBoundToOneHostAddressAnswersThereOnly(NetworkNamespace host, NetworkNamespace outside,
                                                      NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(false));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            servers.tcp(c1, e.ip().getHostAddress(), 80, "c1");
            gatun.publish(new PortRequest("n1", e.ip(), ports(Lab.SECOND_HOST_ADDRESS + ":9090:80"), null));

            assertThat(ReplyServers.tcpFetch(outside, Lab.SECOND_HOST_ADDRESS, 9090)).isEqualTo("c1");
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 9090)).as("the other host address").isFalse();
            // Control: the same client through the other address reaches the same server where a mapping covers it.
            gatun.publish(new PortRequest("n1", e.ip(), ports("9091:80"), null));
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 9091)).as("control: a mapping for every address")
                    .isEqualTo("c1");
        }
    }

    @Test
    void rangeAnswersOnEveryPortAndIpv6Works(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET, "fd00:88::/64");
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(true));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            for (int p = 9000; p <= 9009; p++) {
                servers.tcp(c1, e.ip().getHostAddress(), p, "c1:" + p);
            }
            servers.tcp(c1, e.ip6().getHostAddress(), 80, "c1-v6");
            gatun.publish(new PortRequest("n1", e.ip(), ports("9000-9009:9000-9009"), null));
            gatun.publish(new PortRequest("n1", e.ip6(), ports("[::]:8080:80"), null));

            for (int p = 9000; p <= 9009; p++) {
                assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, p)).isEqualTo("c1:" + p);
            }
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS6, 8080)).isEqualTo("c1-v6");
        }
    }

    @Test
    void hairpinFromItselfAndASiblingAndLocalhostFromTheHost(NetworkNamespace host, NetworkNamespace outside,
                                                            NetworkNamespace c1, NetworkNamespace c2) throws Exception {
        assertThat(Oracle.in(host, "sysctl", "-n", "net.bridge.bridge-nf-call-iptables").strip()).isEqualTo("1");
        hairpinAndLocalhost(host, outside, c1, c2);
    }

    @Test
    void hairpinWorksWithoutBrNetfilterToo(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                          NetworkNamespace c2) throws Exception {
        Oracle.in(host, "sysctl", "-w", "net.bridge.bridge-nf-call-iptables=0");
        hairpinAndLocalhost(host, outside, c1, c2);
    }

    private void hairpinAndLocalhost(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                            NetworkNamespace c2) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(false));
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            gatun.attach(EndpointSpec.of("n1", c2));
            servers.tcp(c1, e1.ip().getHostAddress(), 80, "c1");
            gatun.publish(new PortRequest("n1", e1.ip(), ports("8080:80"), null));

            assertThat(ReplyServers.tcpFetch(c1, Lab.HOST_ADDRESS, 8080)).as("hairpin to itself").isEqualTo("c1");
            assertThat(ReplyServers.tcpFetch(c2, Lab.HOST_ADDRESS, 8080)).as("hairpin from a sibling").isEqualTo("c1");
            assertThat(ReplyServers.tcpFetch(host, "127.0.0.1", 8080)).as("localhost on the host").isEqualTo("c1");
            assertThat(ReplyServers.tcpFetch(host, Lab.HOST_ADDRESS, 8080)).as("host address from the host").isEqualTo("c1");
        }
    }

    @Test
    void unpublishedPortsAndDirectRoutesAreDropped(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(false));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            String ip = e.ip().getHostAddress();
            servers.tcp(c1, ip, 80, "c1-80").tcp(c1, ip, 81, "c1-81");
            String gateway = gatun.network("n1").gateways().getFirst().getHostAddress();
            servers.tcp(host, gateway, 7001, "host-on-the-bridge");
            gatun.publish(new PortRequest("n1", e.ip(), ports("8080:80"), null));

            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).isEqualTo("c1-80");
            // Controls: both servers answer where no forward rule stands between (from the host itself), and
            // the outside's route to the subnet leads to the host (its address on the bridge answers).
            assertThat(ReplyServers.tcpFetch(host, ip, 81)).as("control: port 81 from the host").isEqualTo("c1-81");
            assertThat(ReplyServers.tcpFetch(host, ip, 80)).as("control: port 80 from the host").isEqualTo("c1-80");
            assertThat(ReplyServers.tcpFetch(outside, gateway, 7001)).as("control: the route to the subnet")
                    .isEqualTo("host-on-the-bridge");
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 81)).as("unpublished port on the host").isFalse();
            assertThat(ReplyServers.tcpAnswers(outside, ip, 81)).as("route straight to the container, unpublished").isFalse();
            assertThat(ReplyServers.tcpAnswers(outside, ip, 80)).as("route straight to the container, published").isFalse();
            // The container itself can still go out (outbound is allowed and masqueraded).
            servers.tcp(outside, "192.0.2.2", 7777, "outside");
            assertThat(ReplyServers.tcpFetch(c1, "192.0.2.2", 7777)).isEqualTo("outside");
        }
    }

    @Test
    void udpClientFollowsAHostPortThatMovesToAnotherContainer(NetworkNamespace host, NetworkNamespace outside,
                                                             NetworkNamespace c1, NetworkNamespace c2) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers();
             DatagramChannel client = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(network(false));
            Endpoint a = gatun.attach(EndpointSpec.of("n1", c1));
            Endpoint b = gatun.attach(EndpointSpec.of("n1", c2));
            servers.udp(c1, a.ip().getHostAddress(), 53, "A").udp(c2, b.ip().getHostAddress(), 53, "B");
            gatun.publish(new PortRequest("n1", a.ip(), ports("5353:53/udp"), "app"));
            assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).isEqualTo("A");

            gatun.publish(new PortRequest("n1", b.ip(), ports("5353:53/udp"), "app"));

            long deadline = System.nanoTime() + 1_000_000_000L;
            String answer = null;
            while (System.nanoTime() < deadline && !"B".equals(answer)) {
                answer = ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353);
            }
            assertThat(answer).as("the same client socket reaches B within a second").isEqualTo("B");
        }
    }

    /**
     * A client that kept sending from one source port while nothing was published (a container
     * restarting, a publish that came late): its conntrack entry, made without dnat and refreshed
     * by every datagram, would keep it on the host. The publish deletes it.
     */
    @Test
    void aUdpClientThatBeganBeforeThePublishReachesTheContainerWithinASecond(NetworkNamespace host,
                                                                           NetworkNamespace outside,
                                                                           NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network(false));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53);
                 SteadyUdpClient early = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "early",
                         Duration.ofMillis(100))) {
                early.awaitSent(5);
                assertThat(udpEntries(host)).as("the early client's entry, to the host itself")
                        .contains("dst=" + Lab.HOST_ADDRESS + " sport=").contains("dport=5353 [UNREPLIED] src=" + Lab.HOST_ADDRESS);

                gatun.publish(new PortRequest("n1", e.ip(), ports("5353:53/udp"), "c1"));

                assertThat(inbox.gotAnyStartingWith("early-", Duration.ofSeconds(1)))
                        .as("the client that began before the publish, within a second of it").isTrue();
                try (SteadyUdpClient fresh = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "fresh",
                        Duration.ofMillis(100))) {
                    assertThat(inbox.gotAnyStartingWith("fresh-", Duration.ofSeconds(1)))
                            .as("control: a client from a fresh source port").isTrue();
                }
            }
        }
    }

    @Test
    void unpublishingSeveralUdpPortsDeletesTheEntriesOfEach(NetworkNamespace host, NetworkNamespace outside,
                                                          NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers();
             DatagramChannel client = ReplyServers.udpClient(outside)) {
            gatun.createNetwork(network(false));
            Endpoint a = gatun.attach(EndpointSpec.of("n1", c1));
            servers.udp(c1, a.ip().getHostAddress(), 53, "dns").udp(c1, a.ip().getHostAddress(), 123, "ntp");
            gatun.publish(new PortRequest("n1", a.ip(), ports("5353:53/udp", "1123:123/udp", "8080:80"), "app"));
            assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).isEqualTo("dns");
            assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 1123)).isEqualTo("ntp");
            String to = "src=" + a.ip().getHostAddress() + " ";
            assertThat(udpEntries(host)).as("entries before").contains(to + "dst=192.0.2.2 sport=53 ")
                    .contains(to + "dst=192.0.2.2 sport=123 ");

            gatun.unpublish(new PortRequest("n1", a.ip(), List.of(), "app"));

            assertThat(udpEntries(host)).as("entries after one unpublish of both").doesNotContain(to);
        }
    }

    /** The conntrack binary's list of UDP entries in the namespace. */
    private static String udpEntries(NetworkNamespace ns) {
        return Oracle.in(ns, "conntrack", "-L", "-p", "udp");
    }

    @Test
    void masqueradeInternalAndIccOptionsShapeTheTraffic(NetworkNamespace host, NetworkNamespace outside,
                                                       NetworkNamespace c1, NetworkNamespace c2, NetworkNamespace c3,
                                                       NetworkNamespace c4, NetworkNamespace c5) throws Exception {
        Lab.connectOutside(host, outside, SUBNET, "10.89.0.0/16", "10.90.0.0/16");
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(network(false));
            gatun.createNetwork(NetworkSpec.named("plain").subnet4(Prefix.parse("10.89.0.0/16")).icc(false)
                    .masquerade(false).build());
            gatun.createNetwork(NetworkSpec.named("closed").subnet4(Prefix.parse("10.90.0.0/16")).internal(true).build());
            Endpoint masqueraded = gatun.attach(EndpointSpec.of("n1", c1));
            Endpoint direct = gatun.attach(EndpointSpec.of("plain", c2));
            Endpoint sibling = gatun.attach(EndpointSpec.of("plain", c3));
            Endpoint closed = gatun.attach(EndpointSpec.of("closed", c4));
            Endpoint neighbour = gatun.attach(EndpointSpec.of("n1", c5));
            servers.tcpWhoAmI(outside, "192.0.2.2", 7000);
            servers.tcp(c3, sibling.ip().getHostAddress(), 80, "c3");
            servers.tcp(c4, closed.ip().getHostAddress(), 80, "c4");
            servers.tcp(c5, neighbour.ip().getHostAddress(), 80, "c5");
            // Controls for the refusals below: every server answers from the host, where no forward rule
            // stands between, and two containers of a network with icc on reach each other straight.
            assertThat(ReplyServers.tcpFetch(host, sibling.ip().getHostAddress(), 80)).as("control: c3 from the host")
                    .isEqualTo("c3");
            assertThat(ReplyServers.tcpFetch(host, closed.ip().getHostAddress(), 80)).as("control: c4 from the host")
                    .isEqualTo("c4");
            assertThat(ReplyServers.tcpFetch(c1, neighbour.ip().getHostAddress(), 80)).as("control: icc on, same network")
                    .isEqualTo("c5");

            assertThat(ReplyServers.tcpFetch(c1, "192.0.2.2", 7000)).as("masqueraded").isEqualTo(Lab.HOST_ADDRESS);
            assertThat(ReplyServers.tcpFetch(c2, "192.0.2.2", 7000)).as("masquerade off")
                    .isEqualTo(direct.ip().getHostAddress());
            assertThat(ReplyServers.tcpAnswers(c4, "192.0.2.2", 7000)).as("internal network, no way out").isFalse();
            assertThat(ReplyServers.tcpAnswers(c2, sibling.ip().getHostAddress(), 80)).as("icc off").isFalse();
            // Networks are isolated from each other, as Docker's are; a published port is public, also to them.
            assertThat(ReplyServers.tcpAnswers(c1, sibling.ip().getHostAddress(), 80)).as("another network, straight")
                    .isFalse();
            gatun.publish(new PortRequest("plain", sibling.ip(), ports("8080:80"), null));
            assertThat(ReplyServers.tcpFetch(c1, Lab.HOST_ADDRESS, 8080)).as("another network's published port")
                    .isEqualTo("c3");
            assertThat(masqueraded.ip()).isNotNull();
        }
    }

    /**
     * A container outside gatun's networks (a CNI chain's, here behind a veth of the host as
     * {@code ptp} makes it): its published port answers from outside with the client's own
     * address, and on 127.0.0.1 of the host and to the container itself through a host address,
     * masqueraded; route_localnet of the veth goes back to 0 with the last mapping.
     */
    @Test
    void anOutsideContainerAnswersOnLocalhostAndToItself(NetworkNamespace host, NetworkNamespace outside,
                                                         NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, "10.99.0.0/24");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("vout", null, "eth0", null, c1, null);
            rt.addAddress("vout", Prefix.parse("10.99.0.1/24"));
            rt.setUp("vout", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(c1)) {
            rt.addAddress("eth0", Prefix.parse("10.99.0.2/24"));
            rt.setUp("eth0", true);
            rt.addDefaultRoute(InetAddress.ofLiteral("10.99.0.1"), "eth0");
        }
        Sysctls sysctls = new Sysctls(host);
        sysctls.setIpv4Forwarding(true);
        InetAddress container = InetAddress.ofLiteral("10.99.0.2");
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            servers.tcpWhoAmI(c1, "10.99.0.2", 80);
            gatun.publishOutside(new PortRequest("chain", container, ports("8080:80"), "a1/eth0@chain"), HostPortCheck.SKIP);

            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("from outside, as it came")
                    .isEqualTo("192.0.2.2");
            assertThat(ReplyServers.tcpFetch(host, "127.0.0.1", 8080)).as("localhost, masqueraded")
                    .isEqualTo("10.99.0.1");
            assertThat(ReplyServers.tcpFetch(c1, Lab.HOST_ADDRESS, 8080)).as("hairpin, masqueraded")
                    .isEqualTo("10.99.0.1");
            assertThat(sysctls.read("ipv4/conf/vout/route_localnet")).isEqualTo("1");

            gatun.unpublishOutside(new PortRequest("chain", container, List.of(), "a1/eth0@chain"));
            assertThat(sysctls.read("ipv4/conf/vout/route_localnet")).as("turned off with the last mapping")
                    .isEqualTo("0");
            assertThat(ReplyServers.tcpAnswers(host, "127.0.0.1", 8080)).isFalse();
        }
    }

    /**
     * Docker's way: a container on another program's bridge, adopted, its ports published and a
     * stale one taken away in one {@link OutsidePorts#changeOutside}: it answers from outside as it
     * came, and on 127.0.0.1 of the host and to itself through a host address, masqueraded by the
     * bridge's own entries (route_localnet of the bridge is gatun's part of it); the stale port
     * no longer answers.
     */
    @Test
    void aContainerOnAnAdoptedBridgeAnswersOnLocalhostAndToItself(NetworkNamespace host, NetworkNamespace outside,
                                                                   NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, "172.31.9.0/24");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createBridgeWithoutMac("dock0");
            rt.addAddress("dock0", Prefix.parse("172.31.9.1/24"));
            rt.setUp("dock0", true);
            rt.createVeth("vdock", null, "eth0", null, c1, null);
            rt.setMaster("vdock", "dock0");
            // As Docker sets it: with br_netfilter, the hairpin connection is bridged back out of this port.
            rt.setBridgePortFlags("vdock", true, false);
            rt.setUp("vdock", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(c1)) {
            rt.addAddress("eth0", Prefix.parse("172.31.9.2/24"));
            rt.setUp("eth0", true);
            rt.addDefaultRoute(InetAddress.ofLiteral("172.31.9.1"), "eth0");
        }
        InetAddress container = InetAddress.ofLiteral("172.31.9.2");
        try (GatunDriver gatun = open(host); ReplyServers servers = new ReplyServers()) {
            servers.tcpWhoAmI(c1, "172.31.9.2", 80);
            gatun.adoptBridge(new AdoptedBridge("docker:bridge", "dock0", Prefix.parse("172.31.9.0/24"), null, true, false,
                    true));
            gatun.publishOutside(new PortRequest("docker", container, ports("9090:80"), "docker:aa"), HostPortCheck.SKIP);
            List<OutsideChange.Outcome> done = gatun.changeOutside(new OutsideChange("docker", "docker:aa",
                    Map.of(container, ports("9090:80")), Map.of(container, ports("8080:80")), HostPortCheck.SKIP));
            assertThat(done).extracting(OutsideChange.Outcome::refused).containsOnlyNulls();

            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("from outside, as it came")
                    .isEqualTo("192.0.2.2");
            assertThat(ReplyServers.tcpFetch(host, "127.0.0.1", 8080)).as("localhost, masqueraded")
                    .isEqualTo("172.31.9.1");
            assertThat(ReplyServers.tcpFetch(c1, Lab.HOST_ADDRESS, 8080)).as("hairpin, masqueraded")
                    .isEqualTo("172.31.9.1");
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 9090)).as("the port taken away").isFalse();
            assertThat(new Sysctls(host).read("ipv4/conf/dock0/route_localnet")).isEqualTo("1");
        }
    }
}
