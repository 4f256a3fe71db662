package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Owners, conflicts, concurrency, scale and input checks of the driver contract, read back with the real nft. */
@ExtendWith(FreshNamespaces.class)
class NftablesDriverContractTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");

    private static List<PortSpec> ports(String... specs) {
        return java.util.Arrays.stream(specs).map(PortSpec::parse).toList();
    }

    private static NetworkDriver withNetwork(NetworkNamespace host) {
        NetworkDriver gatun = Gatun.open(host);
        gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
        return gatun;
    }

    @Test
    void secondOwnerGetsAConflictNamingTheHolderAndNothingChanges(NetworkNamespace host) {
        try (NetworkDriver gatun = withNetwork(host)) {
            gatun.publish("n1", C1, ports("8080:80"), "alice");
            String before = Oracle.in(host, "nft", "list", "ruleset");

            ConflictException e = Expect.thrown(ConflictException.class,
                    () -> gatun.publish("n1", InetAddress.ofLiteral("10.88.0.3"), ports("8081:81", "8080:80"), "bob"));

            assertThat(e.getMessage()).contains("8080/tcp").contains("alice");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);

            // The same mapping again by its owner changes nothing.
            gatun.publish("n1", C1, ports("8080:80"), "alice");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);

            ConflictException refused = Expect.thrown(ConflictException.class,
                    () -> gatun.unpublish("n1", C1, ports("8080:80"), "bob"));
            assertThat(refused.getMessage()).contains("alice").contains("bob");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);

            assertThat(gatun.unpublish("n1", C1, List.of(), "alice")).hasSize(1);
            assertThat(gatun.published("n1")).isEmpty();
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
    void sixtyFourThreadsPublishTenThousandMappingsWithHundredConflicts(NetworkNamespace host) throws Exception {
        try (NetworkDriver gatun = withNetwork(host)) {
            // 100 ports held by "holder" before the storm.
            List<PortSpec> held = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                held.add(PortSpec.parse((20000 + i) + ":80"));
            }
            gatun.publish("n1", InetAddress.ofLiteral("10.88.1.1"), held, "holder");

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
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (Request r; (r = queue.poll()) != null; ) {
                        try {
                            gatun.publish("n1", r.ip(), List.of(PortSpec.parse(r.hostPort() + ":80")), r.owner());
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
                t.join();
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
        try (NetworkDriver gatun = withNetwork(host)) {
            List<PortSpec> specs = new ArrayList<>();
            for (int i = 0; i < 50_000; i++) {
                specs.add(PortSpec.parse((i + 1) + ":80"));
                specs.add(PortSpec.parse((i + 1) + ":80/udp"));
            }
            gatun.publish("n1", InetAddress.ofLiteral("10.88.0.9"), specs, "bulk");
            int rulesBefore = countRules(host);

            gatun.publish("n1", C1, ports("60000:80"), "newcomer");

            assertThat(countRules(host)).isEqualTo(rulesBefore);
            String json = Oracle.in(host, "nft", "-j", "list", "map", "inet", "gatun", "ports4");
            assertThat(json).contains("\"comment\": \"newcomer\"").contains("60000");
            assertThat(gatun.published("n1")).hasSize(100_001);
        }
    }

    private static int countRules(NetworkNamespace ns) {
        String json = Oracle.in(ns, "nft", "-j", "list", "ruleset");
        return json.split("\\{\"rule\":", -1).length - 1;
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
        try (NetworkDriver fresh = Gatun.open(host)) {
            assertThat(fresh.networks()).containsExactly(made);
            assertThat(fresh.endpoints("n1")).containsExactly(attached);
            assertThat(fresh.published("n1")).containsExactlyInAnyOrderElementsOf(published);
        }
    }

    @Test
    void networkOptionsAndLifecycle(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        try (NetworkDriver gatun = Gatun.open(host)) {
            Network n = gatun.createNetwork(new NetworkSpec("iso", "gbr-iso", Prefix.parse("10.90.0.0/24"), null, null, null,
                    null, 1400, false, true, false));
            assertThat(n.bridge()).isEqualTo("gbr-iso");
            assertThat(n.gateways()).containsExactly(InetAddress.ofLiteral("10.90.0.1"));
            assertThat(Oracle.in(host, "cat", "/sys/class/net/gbr-iso/addr_assign_type").strip()).isEqualTo("3");
            assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo("1");
            assertThat(Oracle.in(host, "sysctl", "-n", "net.ipv4.conf.gbr-iso.route_localnet").strip()).isEqualTo("1");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "internal")).contains("gbr-iso");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "masq4")).doesNotContain("10.90.0.0");

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
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "bridges")).doesNotContain("gbr-iso");
        }
    }

    @Test
    void badInputIsRefusedNamingTheValueAndNothingChanges(NetworkNamespace host) {
        try (NetworkDriver gatun = withNetwork(host)) {
            String before = Oracle.in(host, "nft", "list", "ruleset");
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
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(before);
        }
    }
}
