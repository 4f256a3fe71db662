package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** Repair of gatun's nftables state after someone else removed parts of it, checked with the nft binary. */
@ExtendWith(FreshNamespaces.class)
class SelfHealingTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress C2 = InetAddress.ofLiteral("10.88.0.3");

    private static String ruleset(NetworkNamespace ns) {
        return Oracle.in(ns, "nft", "list", "ruleset");
    }

    private static HealableDriver withNetwork(NetworkNamespace host) {
        return Specs.withNetwork(Gatun.open(host, "nftables"));
    }

    /** Polls for up to a second; the issue allows a repair one second. */
    private static String awaitRuleset(NetworkNamespace ns, String expected) throws InterruptedException {
        String now = ruleset(ns);
        for (int i = 0; i < 20 && !now.equals(expected); i++) {
            Thread.sleep(50);
            now = ruleset(ns);
        }
        return now;
    }

    @Test
    void repairingAnIntactRulesetChangesNothing(NetworkNamespace host) {
        try (HealableDriver d = withNetwork(host)) {
            d.publish(new PortRequest("n1", C1, ports("8080:80", "127.0.0.1:5353:53/udp"), "alice"));
            String before = ruleset(host);
            assertThat(d.repair(d.published(null))).isEmpty();
            assertThat(ruleset(host)).isEqualTo(before);
        }
    }

    @Test
    void aFlushedRulesetIsPutBackWithinOneSecond(NetworkNamespace host) throws InterruptedException {
        List<String> log = new CopyOnWriteArrayList<>();
        try (GatunDriver plain = withNetwork(host)) {
            plain.publish(new PortRequest("n1", C1, ports("8080:80", "127.0.0.1:5353:53/udp"), "alice"));
        }
        try (SelfHealingDriver d = SelfHealingDriver.start(Gatun.open(host, "nftables"), log::add)) {
            d.publish(new PortRequest("n1", C2, ports("9090:90"), "bob"));
            String before = ruleset(host);
            assertThat(before).contains("comment \"alice\"").contains("comment \"bob\"");

            Oracle.in(host, "nft", "flush", "ruleset");
            assertThat(awaitRuleset(host, before)).as("the ruleset a second after the flush").isEqualTo(before);
            // The log lines follow the commit that put the ruleset back.
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (log.stream().noneMatch(l -> l.contains("bob")) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(log).anyMatch(l -> l.startsWith("repaired table inet gatun"))
                    .anyMatch(l -> l.contains("9090/tcp") && l.contains("bob"));
        }
    }

    @Test
    void aFlushedChainOrSetIsPutBackKeepingTheOtherMappings(NetworkNamespace host) throws InterruptedException {
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver d = SelfHealingDriver.start(withNetwork(host), log::add);
             GatunDriver other = Gatun.open(host, "nftables")) {
            d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            // Made by another process: not this driver's to keep, but a rebuild must not lose it.
            other.publish(new PortRequest("n1", C2, ports("192.0.2.1:9090:90"), "carol"));
            String before = ruleset(host);

            Oracle.in(host, "nft", "flush", "chain", "inet", "gatun", "forward");
            assertThat(awaitRuleset(host, before)).as("after flushing the forward chain").isEqualTo(before);

            Oracle.in(host, "nft", "flush", "map", "inet", "gatun", "ports4");
            assertThat(awaitRuleset(host, before)).as("after flushing the ports4 map").isEqualTo(before);
            // The log line follows the commit that put the map back.
            Bounded.eventually(Duration.ofSeconds(2), () -> log.stream().anyMatch(l -> l.contains("alice")));
            assertThat(log).anyMatch(l -> l.contains("8080/tcp") && l.contains("alice"));
        }
    }

    @Test
    void anUnpublishThroughTheDriverIsNotUndone(NetworkNamespace host) {
        try (SelfHealingDriver d = SelfHealingDriver.start(withNetwork(host), l -> { })) {
            d.publish(new PortRequest("n1", C1, ports("8080:80", "8081:81"), "alice"));
            d.unpublish(new PortRequest("n1", C1, ports("8081:81"), "alice"));
            assertThat(d.wanted()).extracting(PortMapping::hostPort).containsExactly(8080);
            try (HealableDriver kernel = Gatun.open(host, "nftables")) {
                assertThat(kernel.repair(d.wanted())).as("what a repair finds missing").isEmpty();
            }
            assertThat(ruleset(host)).contains("8080").doesNotContain("8081");
        }
    }

    @Test
    void aPortSomeoneElseTookAfterTheFlushIsLeftToThem(NetworkNamespace host) {
        try (HealableDriver d = withNetwork(host); HealableDriver other = Gatun.open(host, "nftables")) {
            List<PortMapping> alice = d.publish(new PortRequest("n1", C1, ports("8080:80", "8081:81"), "alice"));
            Oracle.in(host, "nft", "flush", "ruleset");
            other.repair(List.of());
            other.publish(new PortRequest("n1", C2, ports("8080:80"), "bob"));

            List<String> repaired = d.repair(alice);

            assertThat(repaired).hasSize(1).allMatch(l -> l.contains("8081/tcp"));
            assertThat(d.published("n1")).extracting(PortMapping::hostPort, PortMapping::owner)
                    .containsExactlyInAnyOrder(tuple(8080, "bob"),
                            tuple(8081, "alice"));
        }
    }

    /** A table of another shape (an older gatun, or damage) is rebuilt when a network is created, keeping what it held. */
    @Test
    void creatingANetworkBringsATableOfAnotherShapeUpToDate(NetworkNamespace host) {
        try (HealableDriver d = withNetwork(host)) {
            d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            String intact = ruleset(host);
            Oracle.in(host, "nft", "flush", "chain", "inet", "gatun", "forward");

            d.createNetwork(NetworkSpec.of("n2", Prefix.parse("10.89.0.0/16")));

            String now = ruleset(host);
            assertThat(now).contains("networks are isolated from each other").contains("comment \"alice\"")
                    .contains("\"gatun-n1\"").contains("\"gatun-n2\"");
            d.deleteNetwork("n2", false);
            assertThat(ruleset(host)).isEqualTo(intact);
        }
    }
}
