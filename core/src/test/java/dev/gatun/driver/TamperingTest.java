package dev.gatun.driver;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Someone else deletes one piece of what a long-running gatun keeps in place, with the real
 * {@code nft} binary, while traffic flows through a published port: each piece is back within
 * the second the reliability issue allows, the port answers again, and every other table is
 * as it was, byte for byte in {@code nft list}.
 */
@ExtendWith(FreshNamespaces.class)
class TamperingTest {

    private static final String SUBNET = "10.88.0.0/16";
    private static final long REPAIR_DEADLINE_NANOS = 1_000_000_000L;

    /** Docker's chains as iptables-nft makes them (the part gatun's jump lives in), and a table of another tool. */
    private static void otherTools(NetworkNamespace host) {
        for (String line : List.of("-N DOCKER", "-N DOCKER-USER", "-P FORWARD DROP", "-A FORWARD -j DOCKER-USER",
                "-A FORWARD -o docker0 -j DOCKER", "-A DOCKER-USER -j RETURN")) {
            List<String> cmd = new ArrayList<>(List.of("iptables-nft", "-w"));
            cmd.addAll(Arrays.asList(line.split(" ")));
            Oracle.in(host, cmd.toArray(String[]::new));
        }
        Oracle.Result r = Oracle.nftFile(host, """
                table inet other {
                    set blocked { type ipv4_addr; elements = { 198.51.100.7, 198.51.100.8 } }
                    chain input { type filter hook input priority 0; policy accept; ip saddr @blocked drop; }
                }
                """);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
    }

    @Test
    void aDeletedMapElementIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        Map<String, AtomicInteger> calls = putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete",
                "element", "inet", "gatun", "ports4", "{ tcp . 8080 }"});
        assertOnlyTheSetWasRead(calls);
    }

    @Test
    void aDeletedSetElementIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        // Not the bridges set, whose emptiness was noticed before: a subnet, which only hairpin and masquerade use.
        Map<String, AtomicInteger> calls = putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete",
                "element", "inet", "gatun", "subnets4", "{ " + SUBNET + " }"});
        assertOnlyTheSetWasRead(calls);
    }

    /** A removed element costs a read of its set, not of the whole table nor of the other firewalls. */
    private static void assertOnlyTheSetWasRead(Map<String, AtomicInteger> calls) {
        assertThat(calls).as("the driver's repair calls after the damage").containsKey("repairElements")
                .doesNotContainKeys("repair", "repairOwnRuleset");
    }

    /**
     * Another tool adding and removing elements of its own sets (a ban list, say) wakes no
     * repair: nothing of gatun's lives there.
     */
    @Test
    void elementsChangingInAnotherTableWakeNoRepair(NetworkNamespace host) throws Exception {
        otherTools(host);
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(counting(BridgeDriver.nftables(host), calls), l -> { })) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            awaitQuiet(host);
            calls.clear();
            for (int i = 1; i <= 10; i++) {
                Oracle.in(host, "nft", "add", "element", "inet", "other", "blocked", "{ 203.0.113." + i + " }");
                Oracle.in(host, "nft", "delete", "element", "inet", "other", "blocked", "{ 203.0.113." + i + " }");
            }
            // A flush of gatun's own sets, for contrast, is noticed within the same wait.
            Oracle.in(host, "nft", "flush", "set", "inet", "gatun", "bridges");
            long deadline = System.nanoTime() + REPAIR_DEADLINE_NANOS;
            String bridges = Oracle.in(host, "nft", "list", "set", "inet", "gatun", "bridges");
            while (!bridges.contains("\"gatun-n1\"") && System.nanoTime() < deadline) {
                Thread.sleep(10);
                bridges = Oracle.in(host, "nft", "list", "set", "inet", "gatun", "bridges");
            }
            assertThat(bridges).as("the flushed set a second later").contains("\"gatun-n1\"");
            assertThat(calls).as("repairs after the other table's elements changed").containsOnlyKeys("repairElements");
        }
    }

    @Test
    void aDeletedBridgeElementIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete", "element", "inet", "gatun", "bridges",
                "{ \"gatun-n1\" }"});
    }

    @Test
    void aDeletedRuleIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete", "rule", "inet", "gatun", "forward",
                "handle", handleOf(ns, "inet gatun forward", "comment \"published ports\"")});
    }

    /** A rule changed in place leaves the count of rules as it was: each rule is compared. */
    @Test
    void aReplacedRuleIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"replace", "rule", "inet", "gatun", "forward",
                "handle", handleOf(ns, "inet gatun forward", "comment \"published ports\""), "ct", "status", "dnat",
                "accept"});
    }

    /** A rule someone else adds to one of gatun's chains (here: a drop ahead of all) is damage too. */
    @Test
    void aRuleAddedToGatunsChainIsTakenOut(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"insert", "rule", "inet", "gatun", "forward",
                "tcp", "dport", "80", "drop"});
    }

    @Test
    void aDeletedBaseChainIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete", "chain", "inet", "gatun", "prerouting"});
    }

    @Test
    void aDeletedTableIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1) throws Exception {
        putBack(host, outside, c1, "inet gatun", ns -> new String[] {"delete", "table", "inet", "gatun"});
    }

    @Test
    void aDeletedJumpInDockersChainIsPutBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1)
            throws Exception {
        putBack(host, outside, c1, "ip filter", ns -> new String[] {"delete", "rule", "ip", "filter", "DOCKER-USER",
                "handle", handleOf(ns, "ip filter DOCKER-USER", "jump GATUN-ALLOW")});
    }

    /**
     * Adjacent subnets (Docker's default pools are: 172.17.0.0/16, 172.18.0.0/16, ...) share a
     * boundary in an interval set: the end of one is the start of the next. A table whose rules
     * were flushed is rebuilt with every network's entries in one transaction, and that must not
     * trip over the shared boundary.
     */
    @Test
    void aFlushedTableOfNetworksWithAdjacentSubnetsIsPutBack(NetworkNamespace host) throws Exception {
        flushedAndPutBack(host, gatun -> {
            // Made from the top down: each next subnet ends where the one before it starts.
            gatun.createNetwork(NetworkSpec.of("n3", Prefix.parse("10.88.2.0/24")));
            gatun.createNetwork(NetworkSpec.of("n2", Prefix.parse("10.88.1.0/24")));
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/24")));
        }, "10.88.0.0/24, 10.88.1.0/24,");
    }

    @Test
    void aFlushedTableOfAdoptedBridgesWithAdjacentSubnetsIsPutBack(NetworkNamespace host) throws Exception {
        Oracle.in(host, "ip", "link", "add", "docker0", "type", "bridge");
        Oracle.in(host, "ip", "link", "add", "br-app", "type", "bridge");
        flushedAndPutBack(host, gatun -> {
            gatun.adoptBridge(new AdoptedBridge("docker:d0", "docker0", Prefix.parse("172.31.250.0/24"), null, true, false, true));
            gatun.adoptBridge(new AdoptedBridge("docker:app", "br-app", Prefix.parse("172.31.251.0/24"), null, true, false, true));
            gatun.publishOutside(new PortRequest("docker", InetAddress.ofLiteral("172.31.250.2"), List.of(PortSpec.parse("18600:80")),
                    "docker:c1"), HostPortCheck.CHECK);
        }, "172.31.250.0/24, 172.31.251.0/24");
    }

    private static void flushedAndPutBack(NetworkNamespace host, Consumer<SelfHealingDriver> setUp, String adjacent)
            throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(BridgeDriver.nftables(host), log::add)) {
            setUp.accept(gatun);
            awaitQuiet(host);
            Map<String, String> before = tables(host);
            assertThat(before.get("inet gatun")).contains(adjacent);
            Oracle.in(host, "nft", "flush", "table", "inet", "gatun");
            long deadline = System.nanoTime() + REPAIR_DEADLINE_NANOS;
            Map<String, String> now = tables(host);
            while (!withoutCounters(now).equals(withoutCounters(before)) && System.nanoTime() < deadline) {
                Thread.sleep(10);
                now = tables(host);
            }
            assertThat(withoutCounters(now)).as("the ruleset a second after the flush (log: " + log + ")")
                    .isEqualTo(withoutCounters(before));
            assertThat(log).noneMatch(l -> l.startsWith("repair failed"));
        }
    }

    /**
     * Publishes a port through a self-healing driver, runs {@code damage} (nft's arguments) in
     * {@code host}, and expects the whole ruleset back within a second. Counters aside, for
     * the table damaged ({@code damaged}: a restored rule counts from zero); every other table
     * exactly.
     */
    private static Map<String, AtomicInteger> putBack(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                                      String damaged, Function<NetworkNamespace, String[]> damage)
            throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        otherTools(host);
        List<String> log = new CopyOnWriteArrayList<>();
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        try (SelfHealingDriver gatun = SelfHealingDriver.start(counting(BridgeDriver.nftables(host), calls), log::add);
             ReplyServers servers = new ReplyServers()) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            Endpoint e1 = gatun.attach(EndpointSpec.of("n1", c1));
            servers.tcp(c1, e1.ip().getHostAddress(), 80, "c1");
            gatun.publish(new PortRequest("n1", e1.ip(), List.of(PortSpec.parse("8080:80")), "web"));
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("before the damage").isEqualTo("c1");
            awaitQuiet(host);
            Map<String, String> before = tables(host);
            assertThat(before).containsKeys("inet gatun", "ip filter", "inet other");
            assertThat(before.get("ip filter")).contains("jump GATUN-ALLOW");

            log.clear();
            calls.clear();
            String[] nft = damage.apply(host);
            List<String> cmd = new ArrayList<>(List.of("nft"));
            cmd.addAll(Arrays.asList(nft));
            Oracle.in(host, cmd.toArray(String[]::new));
            long deadline = System.nanoTime() + REPAIR_DEADLINE_NANOS;
            Map<String, String> now = tables(host);
            while (!withoutCounters(now).equals(withoutCounters(before)) && System.nanoTime() < deadline) {
                Thread.sleep(10);
                now = tables(host);
            }
            assertThat(withoutCounters(now)).as("the ruleset a second after nft " + String.join(" ", nft) + " (log: "
                    + log + ")").isEqualTo(withoutCounters(before));
            for (String table : before.keySet()) {
                if (!table.equals(damaged)) {
                    assertThat(now.get(table)).as("table " + table + ", byte for byte").isEqualTo(before.get(table));
                }
            }
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("after the repair").isEqualTo("c1");
            Map<String, AtomicInteger> healerCalls = Map.copyOf(calls);
            try (BridgeDriver kernel = BridgeDriver.nftables(host)) {
                assertThat(kernel.repair(gatun.wanted())).as("what a second repair finds missing").isEmpty();
            }
            assertThat(log).as("what the driver says it did").anyMatch(l -> l.startsWith("repaired "))
                    .noneMatch(l -> l.startsWith("repair failed"));
            return healerCalls;
        }
    }

    /**
     * A repair that fails in a way that may go away (here: other writers kept committing) is
     * tried again at once, not at the check every five seconds: the damage is still put back
     * within the second.
     */
    @Test
    void aRepairThatFailedRetryablyIsTriedAgainSoon(NetworkNamespace host) throws Exception {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        List<String> log = new CopyOnWriteArrayList<>();
        HealableDriver inner = BridgeDriver.nftables(host);
        HealableDriver failingOnce = (HealableDriver) Proxy.newProxyInstance(HealableDriver.class.getClassLoader(),
                new Class<?>[] {HealableDriver.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("repair")
                            && calls.computeIfAbsent(method.getName(), k -> new AtomicInteger()).incrementAndGet() == 1
                            && method.getName().equals("repairElements")) {
                        throw GenerationConflictException.gaveUp("repair table inet gatun", 20,
                                new GenerationConflictException("commit", libc_h.ERESTART, 1));
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        try (SelfHealingDriver gatun = SelfHealingDriver.start(failingOnce, log::add)) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(SUBNET)));
            awaitQuiet(host);
            String before = Oracle.in(host, "nft", "list", "ruleset");

            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "subnets4", "{ " + SUBNET + " }");
            long deadline = System.nanoTime() + REPAIR_DEADLINE_NANOS;
            String now = Oracle.in(host, "nft", "list", "ruleset");
            while (!now.equals(before) && System.nanoTime() < deadline) {
                Thread.sleep(10);
                now = Oracle.in(host, "nft", "list", "ruleset");
            }
            assertThat(now).as("the ruleset a second after the damage (log: " + log + ")").isEqualTo(before);
            assertThat(log).anyMatch(l -> l.startsWith("repair failed: repair table inet gatun: gave up after 20"));
        }
    }

    /** {@code inner}, counting the calls of each of its repair methods into {@code calls}. */
    private static HealableDriver counting(HealableDriver inner, Map<String, AtomicInteger> calls) {
        return (HealableDriver) Proxy.newProxyInstance(HealableDriver.class.getClassLoader(),
                new Class<?>[] {HealableDriver.class}, (proxy, method, args) -> {
                    if (method.getName().startsWith("repair")) {
                        calls.computeIfAbsent(method.getName(), k -> new AtomicInteger()).incrementAndGet();
                    }
                    try {
                        return method.invoke(inner, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** Each table's {@code nft list table} output, by "family name". */
    private static Map<String, String> tables(NetworkNamespace ns) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Oracle.in(ns, "nft", "list", "tables").lines().toList()) {
            String[] words = line.strip().split(" ");
            out.put(words[1] + " " + words[2], Oracle.in(ns, "nft", "list", "table", words[1], words[2]));
        }
        return out;
    }

    private static Map<String, String> withoutCounters(Map<String, String> tables) {
        Map<String, String> out = new LinkedHashMap<>();
        tables.forEach((k, v) -> out.put(k, v.replaceAll("counter packets \\d+ bytes \\d+", "counter")));
        return out;
    }

    /** The handle of the first rule of {@code chain} ("family table chain") whose text contains {@code text}. */
    private static String handleOf(NetworkNamespace ns, String chain, String text) {
        List<String> cmd = new ArrayList<>(List.of("nft", "-a", "list", "chain"));
        cmd.addAll(Arrays.asList(chain.split(" ")));
        String listing = Oracle.in(ns, cmd.toArray(String[]::new));
        return listing.lines().filter(l -> l.contains(text) && l.contains("# handle ")).findFirst()
                .map(l -> l.substring(l.indexOf("# handle ") + "# handle ".length()).strip())
                .orElseThrow(() -> new AssertionError("no rule with " + text + " in " + listing));
    }

    /** The wait above gives up loudly: a listing that never settles fails, one that settles returns. */
    @Test
    void awaitingQuietFailsWhenTheListingNeverSettles() throws InterruptedException {
        AtomicInteger changing = new AtomicInteger();
        assertThatThrownBy(() -> awaitQuiet(changing::incrementAndGet, 3, 1))
                .isInstanceOf(AssertionError.class).hasMessageContaining("did not settle").hasMessageContaining("3 looks");
        AtomicInteger settling = new AtomicInteger();
        awaitQuiet(() -> Math.min(settling.incrementAndGet(), 2), 3, 1);
        assertThat(settling).as("looked until two listings agreed").hasValue(3);
    }

    /**
     * Waits until two listings a little apart agree: the repair that set-up woke has finished.
     * A ruleset still changing after 50 looks (2.5 s) fails the test, since its "before" would
     * be a moving target.
     */
    private static void awaitQuiet(NetworkNamespace ns) throws InterruptedException {
        awaitQuiet(() -> withoutCounters(tables(ns)), 50, 50);
    }

    static <T> void awaitQuiet(Supplier<T> listing, int looks, long pauseMillis) throws InterruptedException {
        T last = listing.get();
        for (int i = 0; i < looks; i++) {
            Thread.sleep(pauseMillis);
            T now = listing.get();
            if (now.equals(last)) {
                return;
            }
            last = now;
        }
        throw new AssertionError("the ruleset did not settle: it still changed after " + looks + " looks "
                + pauseMillis + " ms apart; last: " + last);
    }
}
