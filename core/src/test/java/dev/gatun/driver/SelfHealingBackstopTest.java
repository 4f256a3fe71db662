package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backstop reads other firewalls only while legacy iptables, which sends no notifications,
 * has a table (everything else notifies), and gatun's own table, whose changes the kernel
 * notifies, only every {@value HealSchedule#OWN_TABLE_EVERY}th time; damage to that table is
 * still repaired at once, from its notification.
 */
@ExtendWith(FreshNamespaces.class)
class SelfHealingBackstopTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");
    private static final String LEGACY_JUMP = "-A FORWARD -j GATUN-ALLOW";

    @Test
    void withoutLegacyIptablesTheBackstopReadsOnlyGatunsOwnTableNowAndThen(NetworkNamespace host)
            throws InterruptedException {
        try (Healing h = Healing.start(host)) {
            Map<String, AtomicInteger> calls = h.calls();
            assertThat(count(calls, "repair")).as("the full repair at start").isEqualTo(1);
            awaitCalls(calls, "repairOwnRuleset", 1);
            assertThat(count(calls, "repairOwnRuleset")).as("a read of gatun's own table by the backstop within 20 s")
                    .isEqualTo(1);
            assertThat(count(calls, "otherFirewallsNeedPolling")).as("backstops that asked whether to read the others")
                    .isGreaterThanOrEqualTo(HealSchedule.OWN_TABLE_EVERY);
            assertThat(count(calls, "repairOtherFirewalls")).as("reads of the other firewalls by the backstop").isZero();
            assertThat(count(calls, "repair")).as("full repairs after the one at start").isEqualTo(1);

            // Damage to gatun's own table is repaired from its notification, not left to the backstop.
            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
            long deadline = System.nanoTime() + 1_000_000_000L;
            while (!Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").contains("tcp . 8080")
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains("tcp . 8080");
            assertThat(count(calls, "repairElements")).as("the removed element's set read alone").isGreaterThanOrEqualTo(1);
            assertThat(h.log()).anyMatch(l -> l.startsWith("repaired") && l.contains("8080"));
            assertThat(count(calls, "repair")).as("no full repair for it").isEqualTo(1);
        }
    }

    /**
     * Legacy iptables starts to be used after the serve did (a Docker on iptables-legacy
     * started later): with no notification at all, the backstop opens its FORWARD for gatun's
     * bridge, reads it every time from then on, and puts back the jump someone deletes.
     */
    @Test
    void onceLegacyIptablesHasATableEveryBackstopReadsTheOtherFirewalls(NetworkNamespace host)
            throws InterruptedException {
        try (Healing h = Healing.start(host)) {
            Map<String, AtomicInteger> calls = h.calls();
            awaitCalls(calls, "otherFirewallsNeedPolling", 2);
            assertThat(count(calls, "repairOtherFirewalls")).as("before legacy iptables has a table").isZero();

            Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
            awaitLegacyJump(host, true);
            assertThat(Oracle.in(host, "iptables-legacy-save")).as("opened by the backstop, no notification sent")
                    .contains(LEGACY_JUMP).contains("-A GATUN-ALLOW -i ");
            assertThat(h.log()).anyMatch(l -> l.startsWith("repaired") && l.contains("iptables-legacy"));

            List<String> order = h.order();
            order.clear();
            int full = count(calls, "repair");
            awaitCalls(calls, "repair", full + 1);
            List<String> repairs = order.stream().filter(m -> m.startsWith("repair")).toList();
            int fullAt = repairs.indexOf("repair");
            assertThat(repairs.subList(0, fullAt)).as("every backstop before the next full repair")
                    .isNotEmpty().containsOnly("repairOtherFirewalls");

            // -D fails unless the jump was there, so the deletion itself is certain; whether a save
            // taken after it still shows it gone races the 100 ms backstop, so count repairs instead.
            int repairedBefore = legacyRepairs(h.log());
            Oracle.in(host, "iptables-legacy", "-w", "-D", "FORWARD", "-j", "GATUN-ALLOW");
            awaitLegacyRepairs(h.log(), repairedBefore + 1);
            assertThat(legacyRepairs(h.log())).as("a repair of legacy iptables after the jump was deleted")
                    .isGreaterThan(repairedBefore);
            awaitLegacyJump(host, true);
            assertThat(Oracle.in(host, "iptables-legacy-save")).as("the jump put back").contains(LEGACY_JUMP);
        }
        Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "ACCEPT");
    }

    /** A self-healing driver over a counted nftables driver, its backstop every 100 ms, port 8080 published. */
    private record Healing(SelfHealingDriver driver, Map<String, AtomicInteger> calls, List<String> order,
                           List<String> log) implements AutoCloseable {

        static Healing start(NetworkNamespace host) {
            Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
            List<String> order = new CopyOnWriteArrayList<>();
            List<String> log = new CopyOnWriteArrayList<>();
            HealableDriver counted = counting(Specs.withNetwork(Gatun.open(host, "nftables")), calls, order);
            SelfHealingDriver d = SelfHealingDriver.start(counted, log::add, 0, 100);
            try {
                d.publish(new PortRequest("n1", C1, ports("8080:80"), "alice"));
            } catch (RuntimeException e) {
                d.close();
                throw e;
            }
            return new Healing(d, calls, order, log);
        }

        @Override
        public void close() {
            driver.close();
        }
    }

    private static void awaitCalls(Map<String, AtomicInteger> calls, String method, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (count(calls, method) < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(count(calls, method)).as(method + " calls within 20 s").isGreaterThanOrEqualTo(atLeast);
    }

    private static int legacyRepairs(List<String> log) {
        return (int) log.stream().filter(l -> l.startsWith("repaired") && l.contains("iptables-legacy")).count();
    }

    private static void awaitLegacyRepairs(List<String> log, int atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (legacyRepairs(log) < atLeast && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static void awaitLegacyJump(NetworkNamespace host, boolean there) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (Oracle.in(host, "iptables-legacy-save").contains(LEGACY_JUMP) != there && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    private static int count(Map<String, AtomicInteger> calls, String method) {
        AtomicInteger n = calls.get(method);
        return n == null ? 0 : n.get();
    }

    /** {@code real}, counting the calls of each method by name and noting their order. */
    private static HealableDriver counting(HealableDriver real, Map<String, AtomicInteger> calls, List<String> order) {
        return (HealableDriver) Proxy.newProxyInstance(HealableDriver.class.getClassLoader(),
                new Class<?>[] {HealableDriver.class}, (proxy, method, args) -> {
                    calls.computeIfAbsent(method.getName(), k -> new AtomicInteger()).incrementAndGet();
                    order.add(method.getName());
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
