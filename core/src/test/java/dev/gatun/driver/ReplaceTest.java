package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Handoff;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.Closeable;
import java.net.ConnectException;
import java.net.InetAddress;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A host port handed from one container to another with {@link NetworkDriver#replace}, on the
 * kernel, with real connections from an outside namespace: new connections go to the new owner
 * from the commit on and none is refused, established ones stay with the old one; UDP's next
 * datagram goes to the new owner unless its flows are kept; {@link NetworkDriver#drain} waits
 * for the old connections to end. What replace must refuse changes nothing.
 */
@ExtendWith(FreshNamespaces.class)
class ReplaceTest {

    private static final String SUBNET = "10.88.0.0/16";

    /** Two containers on n1, each answering every line on TCP port 80 with its name. */
    private record Pair(GatunDriver gatun, Endpoint a, Endpoint b, Handoff.LineServers servers) implements Closeable {
        static Pair start(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca, NetworkNamespace cb,
                          GatunDriver gatun) {
            Lab.connectOutside(host, outside, SUBNET);
            gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).build());
            Endpoint a = gatun.attach(EndpointSpec.of("n1", ca));
            Endpoint b = gatun.attach(EndpointSpec.of("n1", cb));
            Handoff.LineServers servers = new Handoff.LineServers();
            servers.start(ca, a.ip(), 80, "a");
            servers.start(cb, b.ip(), 80, "b");
            return new Pair(gatun, a, b, servers);
        }

        @Override
        public void close() {
            servers.close();
            gatun.close();
        }
    }

    @Test
    void newConnectionsFollowEachReplaceWithNoneRefusedAndAnEstablishedOneStaysWithItsContainer(
            NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca, NetworkNamespace cb) throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish(new PortRequest("n1", p.a().ip(), ports("8080:80"), "a"));
            Handoff.Outcome seen = Handoff.run(outside, Lab.HOST_ADDRESS, 8080, 20, 450, i -> {
                Endpoint to = i % 2 == 1 ? p.b() : p.a();
                String owner = i % 2 == 1 ? "b" : "a";
                Replacement r = p.gatun().replace(new PortRequest("n1", to.ip(), ports("8080:80"), owner), HostPortCheck.CHECK, false);
                assertThat(r.replaced()).as("replace " + i + " took the key from the other owner")
                        .extracting(PortMapping::owner).containsExactly(i % 2 == 1 ? "a" : "b");
                assertThat(r.published()).extracting(PortMapping::owner).containsExactly(owner);
            });
            assertThat(seen.wrong()).as("connections refused, reset or answered by the wrong container").isEmpty();
            assertThat(seen.answered()).as("connections made in 10 s").isGreaterThan(500);
            assertThat(seen.keptAnswers()).as("the connection opened before the first replace, before and after each")
                    .hasSize(21).containsOnly("a");
        }
    }

    @Test
    void udpsNextDatagramGoesToTheNewContainerUnlessItsFlowsAreKept(NetworkNamespace host, NetworkNamespace outside,
                                                                   NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"));
             ReplyServers udp = new ReplyServers()) {
            udp.udp(ca, p.a().ip().getHostAddress(), 53, "a").udp(cb, p.b().ip().getHostAddress(), 53, "b");
            p.gatun().publish(new PortRequest("n1", p.a().ip(), ports("5353:53/udp"), "a"));
            try (DatagramChannel client = ReplyServers.udpClient(outside)) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).isEqualTo("a");
                p.gatun().replace(new PortRequest("n1", p.b().ip(), ports("5353:53/udp"), "b"), HostPortCheck.CHECK, true);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).as("flows kept").isEqualTo("a");
                p.gatun().replace(new PortRequest("n1", p.a().ip(), ports("5353:53/udp"), "a"), HostPortCheck.CHECK, false);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353))
                        .as("back to a, b's flows were kept: the client's flow still went to a").isEqualTo("a");
                p.gatun().replace(new PortRequest("n1", p.b().ip(), ports("5353:53/udp"), "b"), HostPortCheck.CHECK, false);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).as("flows deleted").isEqualTo("b");
            }
        }
    }

    @Test
    void whatReplaceMustRefuseChangesNothing(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca,
                                             NetworkNamespace cb) {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish(new PortRequest("n1", p.a().ip(), ports("8080:80"), "a"));
            String before = Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4");

            assertThatThrownBy(() -> p.gatun().publish(new PortRequest("n1", p.b().ip(), ports("8080:80"), "b")))
                    .as("without replace").isInstanceOf(ConflictException.class).hasMessageContaining("owner a");
            assertThatThrownBy(() -> p.gatun().replace(new PortRequest("n1", p.b().ip(), ports(Lab.HOST_ADDRESS + ":8080:80"), "b"),
                    HostPortCheck.CHECK, false)).as("an address-bound twin only overlaps a's key")
                    .isInstanceOf(ConflictException.class).hasMessageContaining("owner a");
            InetAddress nobody = InetAddress.ofLiteral("10.88.0.200");
            assertThatThrownBy(() -> p.gatun().replace(new PortRequest("n1", nobody, ports("8080:80"), "c"), HostPortCheck.CHECK, false))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("10.88.0.200")
                    .hasMessageContaining("nothing was changed");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).isEqualTo(before);

            // Control: the same replace to an attached container does change it.
            p.gatun().replace(new PortRequest("n1", p.b().ip(), ports("8080:80"), "b"), HostPortCheck.CHECK, false);
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).isNotEqualTo(before)
                    .contains(p.b().ip().getHostAddress());
        }
    }

    /** The target check answers from a cache of the host's links: a veth someone deleted must be seen. */
    @Test
    void aTargetWhoseVethAnotherProcessDeletedIsRefused(NetworkNamespace host, NetworkNamespace outside,
                                                        NetworkNamespace ca, NetworkNamespace cb) {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish(new PortRequest("n1", p.a().ip(), ports("8080:80"), "a"));
            p.gatun().replace(new PortRequest("n1", p.b().ip(), ports("8080:80"), "b"), HostPortCheck.CHECK, false);
            p.gatun().replace(new PortRequest("n1", p.a().ip(), ports("8080:80"), "a"), HostPortCheck.CHECK, false);
            Oracle.in(host, "ip", "link", "del", p.b().hostIfname());
            assertThatThrownBy(() -> p.gatun().replace(new PortRequest("n1", p.b().ip(), ports("8080:80"), "b"), HostPortCheck.CHECK,
                    false)).isInstanceOf(NotFoundException.class).hasMessageContaining(p.b().ip().getHostAddress());
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains(p.a().ip().getHostAddress());
        }
    }

    @Test
    void drainWaitsForTheLastEstablishedConnectionOrSaysHowManyRemain(NetworkNamespace host, NetworkNamespace outside,
                                                                     NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish(new PortRequest("n1", p.a().ip(), ports("8080:80", "8081:80"), "a"));
            try (Handoff.Kept one = Handoff.Kept.open(outside, Lab.HOST_ADDRESS, 8080);
                 Handoff.Kept two = Handoff.Kept.open(outside, Lab.HOST_ADDRESS, 8081)) {
                assertThat(one.ask()).isEqualTo("a");
                assertThat(two.ask()).isEqualTo("a");
                List<PortMapping> removed = p.gatun().unpublish(new PortRequest("n1", p.a().ip(), List.of(), "a"));
                assertThatThrownBy(() -> outside.call(() -> Handoff.ask(Lab.HOST_ADDRESS, 8080))).as("no new connection")
                        .hasRootCauseInstanceOf(ConnectException.class);
                assertThat(one.ask()).as("an established one goes on").isEqualTo("a");

                assertThat(p.gatun().drain(removed, Duration.ofMillis(300))).as("both still open at the timeout")
                        .isEqualTo(2);
                one.close();
                CompletableFuture<Long> drained = CompletableFuture.supplyAsync(() -> {
                    int left = p.gatun().drain(removed, Duration.ofSeconds(20));
                    assertThat(left).isZero();
                    return System.nanoTime();
                });
                Handoff.pause(500);
                assertThat(drained).as("one connection still open").isNotDone();
                long closed = System.nanoTime();
                two.close();
                long returned = Bounded.get(drained, "the drain");
                assertThat(Duration.ofNanos(returned - closed)).as("from the last close to the drain's return")
                        .isLessThan(Duration.ofMillis(100));
            }
        }
    }

    @Test
    void aSelfHealingDriverKeepsTheNewOwnersMappingAfterAReplace(NetworkNamespace host, NetworkNamespace outside,
                                                                NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb,
                SelfHealingDriver.start(Gatun.open(host, "nftables"), m -> { }, 0, 100))) {
            SelfHealingDriver d = (SelfHealingDriver) p.gatun();
            d.publish(new PortRequest("n1", p.a().ip(), ports("8080:80"), "a"));
            d.replace(new PortRequest("n1", p.b().ip(), ports("8080:80"), "b"), HostPortCheck.CHECK, false);
            assertThat(d.wanted()).extracting(PortMapping::owner).containsExactly("b");
            // Damage elsewhere makes it repair: the replaced mapping must not come back.
            Oracle.in(host, "nft", "flush", "map", "inet", "gatun", "ports4");
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").contains("8080")
                    && System.nanoTime() < deadline) {
                Handoff.pause(20);
            }
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains(p.b().ip().getHostAddress()).doesNotContain(p.a().ip().getHostAddress());
            try (Handoff.Kept c = Handoff.Kept.open(outside, Lab.HOST_ADDRESS, 8080)) {
                assertThat(c.ask()).isEqualTo("b");
            }
        }
    }
}
