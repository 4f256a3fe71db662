package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Concurrency and scale of the nftables driver: group commit under load, and O(1) publishing. */
@ExtendWith(FreshNamespaces.class)
class NftablesScaleTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");

    private static GatunDriver withNetwork(NetworkNamespace host) {
        return Specs.withNetwork(Gatun.open(host, "nftables"));
    }

    @Test
    void sixtyFourThreadsPublishTenThousandMappingsWithHundredConflicts(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = withNetwork(host)) {
            // 100 ports held by "holder" before the storm.
            List<PortSpec> held = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                held.add(PortSpec.parse((20000 + i) + ":80"));
            }
            gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.1.1"), held, "holder"));

            record Request(int hostPort, InetAddress ip, String owner, boolean conflict) {}
            List<Request> requests = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                requests.add(new Request(30000 + i, InetAddress.ofLiteral("10.88." + (2 + i / 200) + "." + (i % 200 + 2)),
                        "owner-" + i, false));
            }
            for (int i = 0; i < 100; i++) {
                requests.add(i * 101, new Request(20000 + i, InetAddress.ofLiteral("10.88.99." + (i + 2)), "thief-" + i, true));
            }
            ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>(requests);
            ConcurrentLinkedQueue<String> conflicts = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
            AtomicInteger succeeded = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 64; t++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    Bounded.await(start, "the start of the publishers");
                    for (Request r; (r = queue.poll()) != null; ) {
                        try {
                            gatun.publish(new PortRequest("n1", r.ip(), List.of(PortSpec.parse(r.hostPort() + ":80")), r.owner()));
                            if (r.conflict()) {
                                unexpected.add(new AssertionError("conflict " + r + " was accepted"));
                            } else {
                                succeeded.incrementAndGet();
                            }
                        } catch (ConflictException e) {
                            if (r.conflict() && e.getMessage().contains("holder")) {
                                conflicts.add(r.owner());
                            } else {
                                unexpected.add(e);
                            }
                        } catch (Throwable e) {
                            unexpected.add(e);
                        }
                    }
                }));
            }
            start.countDown();
            for (Thread t : threads) {
                Bounded.join(t, "a publishing thread");
            }
            assertThat(unexpected).isEmpty();
            assertThat(succeeded.get()).isEqualTo(10_000);
            assertThat(new HashSet<>(conflicts)).hasSize(100);

            List<PortMapping> all = gatun.published("n1");
            assertThat(all).hasSize(10_100);
            Set<String> seen = new HashSet<>();
            for (PortMapping m : all) {
                assertThat(seen.add(m.protocol() + "/" + m.hostPort())).isTrue();
                if (m.hostPort() < 30000) {
                    assertThat(m.owner()).isEqualTo("holder");
                } else {
                    assertThat(m.owner()).isEqualTo("owner-" + (m.hostPort() - 30000));
                }
            }
        }
    }

    @Test
    void withHundredThousandMappingsOneMorePublishAddsNoRule(NetworkNamespace host) {
        try (GatunDriver gatun = withNetwork(host)) {
            List<PortSpec> specs = new ArrayList<>();
            for (int i = 0; i < 50_000; i++) {
                specs.add(PortSpec.parse((i + 1) + ":80"));
                specs.add(PortSpec.parse((i + 1) + ":80/udp"));
            }
            gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.9"), specs, "bulk"));
            int rulesBefore = countRules(host);

            gatun.publish(new PortRequest("n1", C1, ports("60000:80"), "newcomer"));

            assertThat(countRules(host)).isEqualTo(rulesBefore);
            String json = Oracle.in(host, "nft", "-j", "list", "map", "inet", "gatun", "ports4");
            assertThat(json).contains("\"comment\": \"newcomer\"").contains("60000");
            assertThat(gatun.published("n1")).hasSize(100_001);
        }
    }

    /**
     * A publish of many ports reads the maps whole instead of key by key (over 1,024 keys: here
     * 1,000 ports and the gateway address); the small one looks its keys up. Both find the same
     * conflicts, a wildcard holder, an address-bound one and a socket of the host (looked up per
     * address and port, or over 1,024 of them read in one dump), and change nothing when they do.
     */
    @ParameterizedTest(name = "{0} ports in one publish")
    @ValueSource(ints = {100, 1000})
    void aPublishOfManyPortsFindsTheConflictsThatAFewPortsFind(int count, NetworkNamespace host) throws IOException {
        try (GatunDriver gatun = withNetwork(host)) {
            int held = 30000 + count / 2;
            int heldOnGateway = 30000 + count / 4;
            gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.1.1"), ports(held + ":80"), "holder"));
            gatun.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.1.1"), ports("10.88.0.1:" + heldOnGateway + ":80"), "holder"));

            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, range(30000, count, Set.of()), "bulk")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining("holder");
            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, range(30000, count, Set.of(held)), "bulk")))
                    .isInstanceOf(ConflictException.class).hasMessageContaining(Integer.toString(heldOnGateway))
                    .hasMessageContaining("holder");
            assertThat(gatun.published("n1")).as("nothing of a refused publish").hasSize(2);

            // A socket of the host on a port of the range: asked one by one, or read in one dump.
            int listened = 30000 + count - 1;
            try (ServerSocketChannel listener = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET)
                    .bind(new InetSocketAddress(listened)))) {
                assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, range(30000, count, Set.of(held, heldOnGateway)), "bulk")))
                        .isInstanceOf(ConflictException.class).hasMessageContaining("*:" + listened + "/tcp is in use on the host");
            }
            assertThat(gatun.published("n1")).as("nothing of a refused publish").hasSize(2);

            List<PortMapping> made = gatun.publish(new PortRequest("n1", C1, range(30000, count, Set.of(held, heldOnGateway)), "bulk"));
            assertThat(made).hasSize(count - 2);
            assertThat(gatun.publish(new PortRequest("n1", C1, range(30000, count, Set.of(held, heldOnGateway)), "bulk")))
                    .as("the same publish again: already there").hasSize(count - 2);
            String json = Oracle.in(host, "nft", "-j", "list", "map", "inet", "gatun", "ports4");
            assertThat(json.split("\"comment\": \"bulk\"", -1).length - 1).isEqualTo(count - 2);
        }
    }

    /** Ports {@code first} to {@code first + count - 1} to container port 80, but {@code without}. */
    private static List<PortSpec> range(int first, int count, Set<Integer> without) {
        List<PortSpec> out = new ArrayList<>();
        for (int p = first; p < first + count; p++) {
            if (!without.contains(p)) {
                out.add(PortSpec.parse(p + ":80"));
            }
        }
        return out;
    }

    private static int countRules(NetworkNamespace ns) {
        String json = Oracle.in(ns, "nft", "-j", "list", "ruleset");
        return json.split("\\{\"rule\":", -1).length - 1;
    }

    /** Separate drivers (as separate processes would) race on the generation guard and retry; none fails. */
    @Test
    void sixteenDriversPublishingAtOnceAllSucceed(NetworkNamespace host) throws Exception {
        try (GatunDriver setup = withNetwork(host)) {
            List<GatunDriver> drivers = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                drivers.add(Gatun.open(host, "nftables"));
            }
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                GatunDriver d = drivers.get(t);
                int base = 10000 + t * 1000;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        Bounded.await(start, "the start of the publishers");
                        for (int i = 0; i < 50; i++) {
                            d.publish(new PortRequest("n1", C1, List.of(PortSpec.parse((base + i) + ":80")), null));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            start.countDown();
            for (Thread t : threads) {
                Bounded.join(t, "a publishing thread");
            }
            drivers.forEach(GatunDriver::close);
            assertThat(failures).isEmpty();
            assertThat(setup.published("n1")).hasSize(800);
        }
    }
}
