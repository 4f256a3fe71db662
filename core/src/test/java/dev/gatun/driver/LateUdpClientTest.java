package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.SteadyUdpClient;
import dev.gatun.testing.UdpInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * UDP clients whose conntrack entry was made while their port had no mapping, on the nftables
 * driver, in the ways the driver learns of them (see GatunRuleset's udpheard): datagrams seen by
 * its input rule, entries made before its table existed, and a repair after the ruleset was
 * flushed. The case every driver shares is in {@link DriverTrafficSuite}.
 */
@ExtendWith(FreshNamespaces.class)
class LateUdpClientTest {

    private static final String SUBNET = "10.88.0.0/16";
    private static final Duration EVERY = Duration.ofMillis(100);

    private static NetworkSpec network() {
        return NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).build();
    }

    /** The ports gatun's table has heard untranslated UDP go to, as nft lists them. */
    private static String heard(NetworkNamespace host) {
        return Oracle.in(host, "nft", "list", "set", "inet", "gatun", "udpheard");
    }

    @Test
    void theTableHearsWhichPortsUntranslatedUdpWentToAndOnlyThose(NetworkNamespace host, NetworkNamespace outside,
                                                                  NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        try (HealableDriver gatun = Gatun.open(host, "nftables")) {
            gatun.createNetwork(network());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            gatun.publish(new PortRequest("n1", e.ip(), ports("6000:53/udp"), "c1"));
            try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53);
                 SteadyUdpClient early = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "early", EVERY);
                 SteadyUdpClient published = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 6000, "published", EVERY)) {
                early.awaitSent(3);
                assertThat(inbox.gotAnyStartingWith("published-", Duration.ofSeconds(1))).as("control").isTrue();

                assertThat(heard(host)).as("a port nothing is published on").contains("5353 expires")
                        .as("a published port, whose datagrams were translated").doesNotContain("6000");
            }
        }
    }

    /**
     * The client sent before gatun's table existed and stopped; the publish comes, then the
     * client sends again: only the table's making, which reads conntrack once, can have told. The
     * host's own firewall tracks connections (as ufw's or Docker's does), so entries were made.
     */
    @Test
    void aClientThatSentBeforeTheTableExistedReachesTheContainer(NetworkNamespace host, NetworkNamespace outside,
                                                                 NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        hostFirewallTracksConnections(host);
        try (SteadyUdpClient before = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "before", EVERY)) {
            before.awaitSent(3);
            assertThat(Oracle.in(host, "conntrack", "-L", "-p", "udp")).contains("dport=5353 [UNREPLIED]");
            before.pause();
            try (HealableDriver gatun = Gatun.open(host, "nftables")) {
                gatun.createNetwork(network());
                assertThat(heard(host)).as("read from conntrack when the table was made").contains("5353 expires");
                Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
                try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53)) {
                    gatun.publish(new PortRequest("n1", e.ip(), ports("5353:53/udp"), "c1"));
                    before.resume();

                    assertThat(inbox.gotAnyStartingWith("before-", Duration.ofSeconds(1)))
                            .as("the client that sent before the table, once it sends again").isTrue();
                }
            }
        }
    }

    /**
     * Someone deleted gatun's table, mapping and all; a new client began while it was gone (its
     * datagrams went to the host itself, tracked by the host's own firewall); the repair that puts
     * the mapping back lets it through.
     */
    @Test
    void aClientThatBeganWhileTheTableWasGoneReachesTheContainerAfterTheRepair(
            NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        hostFirewallTracksConnections(host);
        try (HealableDriver gatun = Gatun.open(host, "nftables")) {
            gatun.createNetwork(network());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            gatun.publish(new PortRequest("n1", e.ip(), ports("5353:53/udp"), "c1"));
            List<PortMapping> wanted = gatun.published("n1");
            Oracle.in(host, "nft", "delete", "table", "inet", "gatun");
            try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53);
                 SteadyUdpClient during = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "during", EVERY)) {
                during.awaitSent(3);
                assertThat(inbox.received()).as("nothing reaches the container while the table is gone").isEmpty();
                assertThat(Oracle.in(host, "conntrack", "-L", "-p", "udp")).contains("dport=5353 [UNREPLIED] src="
                        + Lab.HOST_ADDRESS);

                assertThat(gatun.repair(wanted)).isNotEmpty();

                assertThat(inbox.gotAnyStartingWith("during-", Duration.ofSeconds(1)))
                        .as("the client that began while the table was gone, within a second of the repair").isTrue();
            }
        }
    }

    /**
     * Under a serve's driver: a client sending since before the publish, the ruleset flushed (and
     * udpheard with it) and put back by the healer on its own, then the publish.
     */
    @Test
    void aClientThatBeganBeforeThePublishReachesTheContainerAfterAFlushAndTheServesRepair(
            NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            gatun.createNetwork(network());
            Endpoint e = gatun.attach(EndpointSpec.of("n1", c1));
            try (UdpInbox inbox = UdpInbox.bind(c1, e.ip().getHostAddress(), 53);
                 SteadyUdpClient early = SteadyUdpClient.start(outside, Lab.HOST_ADDRESS, 5353, "early", EVERY)) {
                early.awaitSent(3);
                Oracle.in(host, "nft", "flush", "ruleset");
                awaitTable(host, log);

                gatun.publish(new PortRequest("n1", e.ip(), ports("5353:53/udp"), "c1"));

                assertThat(inbox.gotAnyStartingWith("early-", Duration.ofSeconds(1)))
                        .as("the client that began before the publish, within a second of it").isTrue();
            }
        }
    }

    /** A table of the host's own, as ufw's or Docker's: conntrack follows every flow, gatun's table or not. */
    private static void hostFirewallTracksConnections(NetworkNamespace host) {
        Oracle.in(host, "nft", "add table inet fw { chain input { type filter hook input priority 0; "
                + "ct state established,related accept; }; }");
    }

    private static void awaitTable(NetworkNamespace host, List<String> log) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (log.stream().noneMatch(l -> l.startsWith("repaired table inet gatun"))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no repair of gatun's table within 5 s of the flush: " + new ArrayList<>(log));
            }
            Thread.sleep(20);
        }
    }
}
