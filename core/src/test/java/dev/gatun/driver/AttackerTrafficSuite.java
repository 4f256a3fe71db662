package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.CraftedFrames;
import dev.gatun.testing.CraftedFrames.Wire;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.UdpInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A published port answers exactly what its publish says, tried as an attacker tries it: UDP
 * datagrams in Ethernet frames written byte by byte and sent with an AF_PACKET socket from the
 * LAN or from a container (CAP_NET_RAW is a container's by default), to the host's MAC or the
 * gateway's, with 127.0.0.1 as destination. Nothing on the sending side routes or checks them.
 * Every refused frame has a control: the same crafting, to a target it may reach, arrives. Every
 * driver runs the same suite (see the subclasses).
 */
@ExtendWith(FreshNamespaces.class)
abstract class AttackerTrafficSuite {

    /** The driver under test, for the namespace that plays the host. */
    abstract GatunDriver open(NetworkNamespace host);

    /** Takes the driver's loopback drop away, as someone editing the host's firewall by hand would. */
    abstract void removeLoopbackDrop(NetworkNamespace host);

    private static final String SUBNET = "10.88.0.0/16";
    private static final InetAddress OUTSIDE = InetAddress.ofLiteral("192.0.2.2");
    private static final InetAddress HOST = InetAddress.ofLiteral(Lab.HOST_ADDRESS);
    private static final InetAddress LOCALHOST = InetAddress.ofLiteral("127.0.0.1");
    /** How long a refused frame is given to arrive after its control has. */
    private static final Duration GRACE = Duration.ofMillis(500);
    private static final Duration ARRIVES = Duration.ofSeconds(3);

    private static NetworkSpec network() {
        return NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).build();
    }

    @Test
    void aPortPublishedOnLocalhostDoesNotAnswerFramesFromTheLan(NetworkNamespace host, NetworkNamespace outside,
                                                                NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53)) {
                gatun.publish(new PortRequest("n1", e.ip(), ports("127.0.0.1:5353:53/udp", "5354:53/udp"), "c1"));
                Wire lan = Wire.to(outside, "eth0", host, "gout");

                CraftedFrames.udp(lan, OUTSIDE, 40001, HOST, 5354, "control");
                CraftedFrames.udp(lan, OUTSIDE, 40002, LOCALHOST, 5353, "to 127.0.0.1 from the LAN");

                assertThat(inbox.got("control", ARRIVES)).as("control: the same frame to a port on every address")
                        .isTrue();
                assertThat(inbox.got("to 127.0.0.1 from the LAN", GRACE)).as("a port published on 127.0.0.1 only")
                        .isFalse();
            }
        }
    }

    @Test
    void aContainerDoesNotReachTheHostsLoopbackThroughItsGateway(NetworkNamespace host, NetworkNamespace c1)
            throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.setUp("lo", true);
        }
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            Network n = gatun.network("n1");
            InetAddress gateway = n.gateways().getFirst();
            assertThat(new Sysctls(host).read("ipv4/conf/" + n.bridge() + "/route_localnet"))
                    .as("the door this guards: the bridge routes 127.0.0.0/8").isEqualTo("1");
            loopbackRefusedWhereTheControlArrives(host, Wire.to(c1, "eth0", host, n.bridge()), e.ip(), gateway);
        }
    }

    /** What gatun doctor reports: every interface routing 127.0.0.0/8, who turned it on, and whether the drop guards it. */
    @Test
    void everyInterfaceRoutingLoopbackIsReportedWithWhatGuardsIt(NetworkNamespace host, NetworkNamespace outside)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        Sysctls sysctls = new Sysctls(host);
        sysctls.setRouteLocalnet("gout", true);
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network());
            String bridge = gatun.network("n1").bridge();

            assertThat(gatun.localnetRoutes()).containsExactlyInAnyOrder(
                    new LocalnetRoute("gout", null, true),
                    new LocalnetRoute(bridge, "gatun network n1", true));

            removeLoopbackDrop(host);
            assertThat(gatun.localnetRoutes()).as("with the drop taken away").containsExactlyInAnyOrder(
                    new LocalnetRoute("gout", null, false),
                    new LocalnetRoute(bridge, "gatun network n1", false));
            gatun.deleteNetwork("n1", false);
            assertThat(gatun.localnetRoutes()).as("with gatun's last network gone")
                    .containsExactly(new LocalnetRoute("gout", null, false));
        }
    }

    @Test
    void aContainerDoesNotReachAPortPublishedOnLocalhost(NetworkNamespace host, NetworkNamespace c1,
                                                         NetworkNamespace c2) throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.setUp("lo", true); // without it, 127.0.0.1 is no local address and no dnat matches it
        }
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network());
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            Endpoint e2 = gatun.attach(EndpointSpec.of("n1", c2));
            Network n = gatun.network("n1");
            try (UdpInbox inbox = UdpInbox.bind(c1, e1.ip().getHostAddress(), 53)) {
                gatun.publish(new PortRequest("n1", e1.ip(), ports("127.0.0.1:5353:53/udp", "5354:53/udp"), "c1"));
                Wire toGateway = Wire.to(c2, "eth0", host, n.bridge());

                CraftedFrames.udp(toGateway, e2.ip(), 40001, n.gateways().getFirst(), 5354, "control");
                CraftedFrames.udp(toGateway, e2.ip(), 40002, LOCALHOST, 5353, "to 127.0.0.1 from a sibling");

                assertThat(inbox.got("control", ARRIVES)).as("control: hairpin to a port on every address").isTrue();
                assertThat(inbox.got("to 127.0.0.1 from a sibling", GRACE)).as("a port published on 127.0.0.1 only")
                        .isFalse();
            }
        }
    }

    @Test
    void theLanDoesNotReachTheHostsIpv6Loopback(NetworkNamespace host, NetworkNamespace outside) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (GatunDriver gatun = open(host)) {
            gatun.createNetwork(network());
            try (UdpInbox loopbackOnly = UdpInbox.bind(host, "::1", 9999);
                 UdpInbox onTheLan = UdpInbox.bind(host, Lab.HOST_ADDRESS6, 9998)) {
                Wire lan = Wire.to(outside, "eth0", host, "gout");
                InetAddress from = InetAddress.ofLiteral("2001:db8::2");

                CraftedFrames.udp(lan, from, 40001, InetAddress.ofLiteral(Lab.HOST_ADDRESS6), 9998, "control");
                CraftedFrames.udp(lan, from, 40002, InetAddress.ofLiteral("::1"), 9999, "to ::1 from the LAN");

                assertThat(onTheLan.got("control", ARRIVES)).as("control: the host's address on the LAN").isTrue();
                assertThat(loopbackOnly.got("to ::1 from the LAN", GRACE)).as("a service bound to ::1").isFalse();
            }
        }
    }

    /**
     * A container outside gatun's networks behind a veth of the host, as the CNI plugin
     * {@code ptp} leaves it: gatun turns route_localnet on for the veth when a port is published to
     * it, and that is no door to the host's loopback.
     */
    @Test
    void aChainedContainerDoesNotReachTheHostsLoopback(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("vout", null, "eth0", null, c1, null);
            rt.addAddress("vout", Prefix.parse("10.99.0.1/24"));
            rt.setUp("vout", true);
            rt.setUp("lo", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(c1)) {
            rt.addAddress("eth0", Prefix.parse("10.99.0.2/24"));
            rt.setUp("eth0", true);
            rt.addDefaultRoute(InetAddress.ofLiteral("10.99.0.1"), "eth0");
        }
        new Sysctls(host).setIpv4Forwarding(true);
        InetAddress container = InetAddress.ofLiteral("10.99.0.2");
        try (GatunDriver gatun = open(host)) {
            gatun.publishOutside(new PortRequest("chain", container, ports("127.0.0.1:5353:53/udp"), "a1/eth0@chain"),
                    HostPortCheck.SKIP);
            assertThat(new Sysctls(host).read("ipv4/conf/vout/route_localnet")).as("the door this guards")
                    .isEqualTo("1");
            loopbackRefusedWhereTheControlArrives(host, Wire.to(c1, "eth0", host, "vout"), container,
                    InetAddress.ofLiteral("10.99.0.1"));
            gatun.unpublishOutside(new PortRequest("chain", container, List.of(), "a1/eth0@chain"));
        }
    }

    /** The same for a container on another program's bridge that gatun adopted (Docker's, under serve --docker). */
    @Test
    void aContainerOnAnAdoptedBridgeDoesNotReachTheHostsLoopback(NetworkNamespace host, NetworkNamespace c1)
            throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createBridgeWithoutMac("dock0");
            rt.addAddress("dock0", Prefix.parse("172.31.9.1/24"));
            rt.setUp("dock0", true);
            rt.createVeth("vdock", null, "eth0", null, c1, null);
            rt.setMaster("vdock", "dock0");
            rt.setUp("vdock", true);
            rt.setUp("lo", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(c1)) {
            rt.addAddress("eth0", Prefix.parse("172.31.9.2/24"));
            rt.setUp("eth0", true);
            rt.addDefaultRoute(InetAddress.ofLiteral("172.31.9.1"), "eth0");
        }
        AdoptedBridge docker = new AdoptedBridge("docker:bridge", "dock0", Prefix.parse("172.31.9.0/24"), null, true,
                false, true);
        try (GatunDriver gatun = open(host)) {
            gatun.adoptBridge(docker);
            assertThat(new Sysctls(host).read("ipv4/conf/dock0/route_localnet")).as("the door this guards")
                    .isEqualTo("1");
            loopbackRefusedWhereTheControlArrives(host, Wire.to(c1, "eth0", host, "dock0"),
                    InetAddress.ofLiteral("172.31.9.2"), InetAddress.ofLiteral("172.31.9.1"));
            gatun.releaseBridge(docker);
        }
    }

    /**
     * From {@code from} over {@code wire}: a frame to the host's 127.0.0.1, where a service of the
     * host listens, is not delivered; the same frame to {@code hostSide} (the host's address on that
     * link, a service listening there too) is.
     */
    private static void loopbackRefusedWhereTheControlArrives(NetworkNamespace host, Wire wire, InetAddress from,
                                                              InetAddress hostSide) throws Exception {
        try (UdpInbox loopbackOnly = UdpInbox.bind(host, "127.0.0.1", 9999);
             UdpInbox onHostSide = UdpInbox.bind(host, hostSide.getHostAddress(), 9998)) {
            CraftedFrames.udp(wire, from, 40001, hostSide, 9998, "control");
            CraftedFrames.udp(wire, from, 40002, LOCALHOST, 9999, "to the host's 127.0.0.1");

            assertThat(onHostSide.got("control", ARRIVES)).as("control: the same frame to " + hostSide.getHostAddress())
                    .isTrue();
            assertThat(loopbackOnly.got("to the host's 127.0.0.1", GRACE)).as("a service bound to 127.0.0.1").isFalse();
        }
    }
}
