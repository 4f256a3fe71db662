package dev.gatun.driver;

import dev.gatun.Gatun;
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
 * The backstop reads the other firewalls each time (legacy iptables sends no notifications) but
 * gatun's own table, whose changes the kernel notifies, only every {@value SelfHealingDriver#OWN_TABLE_EVERY}th
 * time; damage to that table is still repaired at once, from its notification.
 */
@ExtendWith(FreshNamespaces.class)
class SelfHealingBackstopTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");

    @Test
    void theBackstopReadsGatunsOwnTableOnlyNowAndThen(NetworkNamespace host) throws InterruptedException {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        List<String> order = new CopyOnWriteArrayList<>();
        NetworkDriver counted = counting(Specs.withNetwork(Gatun.open(host, "nftables")), calls, order);
        List<String> log = new CopyOnWriteArrayList<>();
        try (SelfHealingDriver d = SelfHealingDriver.start(counted, log::add, 0, 100)) {
            d.publish("n1", C1, ports("8080:80"), "alice");
            assertThat(count(calls, "repair")).as("the full repair at start").isEqualTo(1);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (count(calls, "repair") < 2 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(count(calls, "repair")).as("a full repair by the backstop within 20 s").isGreaterThanOrEqualTo(2);
            List<String> repairs = order.stream().filter(m -> m.startsWith("repair")).toList();
            int second = repairs.subList(1, repairs.size()).indexOf("repair") + 1;
            assertThat(repairs.subList(0, second + 1)).as("the repairs in order, up to the backstop's first full one")
                    .first().isEqualTo("repair");
            assertThat(repairs.subList(1, second)).as("backstops that read only the other firewalls before it")
                    .hasSize(SelfHealingDriver.OWN_TABLE_EVERY - 1).containsOnly("repairOtherFirewalls");

            // Damage to gatun's own table is repaired from its notification, not left to the backstop.
            int fullBefore = count(calls, "repair");
            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
            deadline = System.nanoTime() + 1_000_000_000L;
            while (!Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").contains("tcp . 8080")
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains("tcp . 8080");
            assertThat(count(calls, "repairElements")).as("the removed element's set read alone").isGreaterThanOrEqualTo(1);
            assertThat(log).anyMatch(l -> l.startsWith("repaired") && l.contains("8080"));
            assertThat(count(calls, "repair")).as("no full repair for it").isLessThanOrEqualTo(fullBefore + 1);
        }
    }

    private static int count(Map<String, AtomicInteger> calls, String method) {
        AtomicInteger n = calls.get(method);
        return n == null ? 0 : n.get();
    }

    /** {@code real}, counting the calls of each method by name and noting their order. */
    private static NetworkDriver counting(NetworkDriver real, Map<String, AtomicInteger> calls, List<String> order) {
        return (NetworkDriver) Proxy.newProxyInstance(NetworkDriver.class.getClassLoader(),
                new Class<?>[] {NetworkDriver.class}, (proxy, method, args) -> {
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
