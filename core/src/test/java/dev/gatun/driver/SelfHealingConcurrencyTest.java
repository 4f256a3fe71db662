package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Publishes and unpublishes from many threads at once through {@link SelfHealingDriver}, which
 * lets them commit together: what it keeps ({@code wanted}) must end as the kernel holds it,
 * which a driver that reads the kernel afresh shows, and a flush must be put back to exactly it.
 */
@ExtendWith(FreshNamespaces.class)
class SelfHealingConcurrencyTest {

    private static final int THREADS = 8;
    private static final int CALLS_PER_THREAD = 150;
    /** Host ports every thread publishes and unpublishes, each to its own container. */
    private static final int SHARED_PORTS = 6;
    private static final int OWN_PORTS = 4;
    private static final int RACE_ROUNDS = 300;

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress C2 = InetAddress.ofLiteral("10.88.0.3");

    private static SelfHealingDriver started(NetworkNamespace host, List<String> log) {
        HealableDriver d = Gatun.open(host, "nftables");
        d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
        return SelfHealingDriver.start(d, log::add);
    }

    private static InetAddress container(int thread) {
        return InetAddress.ofLiteral("10.88.1." + (thread + 2));
    }

    private static List<PortSpec> port(int host, int container) {
        return List.of(PortSpec.parse(host + ":" + container));
    }

    @Test
    void manyThreadsOnDistinctAndSharedPortsLeaveWantedAsTheKernelHoldsIt(NetworkNamespace host) throws Exception {
        List<String> log = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (SelfHealingDriver d = started(host, log); HealableDriver kernel = Gatun.open(host, "nftables")) {
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Integer>> made = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                made.add(pool.submit(() -> {
                    start.await(2, TimeUnit.MINUTES);
                    return calls(d, thread);
                }));
            }
            int changes = 0;
            for (Future<Integer> f : made) {
                changes += f.get(2, TimeUnit.MINUTES);
            }
            assertThat(changes).as("calls that changed something").isGreaterThan(THREADS * CALLS_PER_THREAD / 4);

            List<PortMapping> wanted = d.wanted();
            assertThat(wanted).isNotEmpty().containsExactlyInAnyOrderElementsOf(kernel.published(null));
            assertThat(kernel.repair(wanted)).as("what a repair finds missing").isEmpty();

            String before = Oracle.in(host, "nft", "list", "ruleset");
            Oracle.in(host, "nft", "flush", "ruleset");
            assertThat(awaitRuleset(host, before)).as("the ruleset a second after the flush").isEqualTo(before);
            assertThat(kernel.published(null)).containsExactlyInAnyOrderElementsOf(wanted);
            assertThat(d.wanted()).containsExactlyInAnyOrderElementsOf(wanted);
            assertThat(log).noneMatch(l -> l.startsWith("repair failed"));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Random publishes and unpublishes of one thread: on ports every thread uses (to a container
     * of its own, so each publish moves the port, and an unpublish finds it only if it is still
     * this thread's) and on ports of its own. Returns how many calls changed something.
     */
    private static int calls(SelfHealingDriver d, int thread) {
        Random random = new Random(thread);
        InetAddress mine = container(thread);
        int changed = 0;
        for (int i = 0; i < CALLS_PER_THREAD; i++) {
            boolean shared = random.nextBoolean();
            int hostPort = shared ? 7000 + random.nextInt(SHARED_PORTS) : 8000 + thread * OWN_PORTS + random.nextInt(OWN_PORTS);
            String owner = shared ? "shared" : "thread-" + thread;
            List<PortSpec> ports = port(hostPort, 80);
            try {
                if (random.nextInt(3) == 0) {
                    changed += d.unpublish(new PortRequest("n1", mine, ports, owner)).size();
                } else {
                    changed += d.publish(new PortRequest("n1", mine, ports, owner)).size();
                }
            } catch (NotFoundException e) {
                // Not published (or no longer to this container): the race this test is about.
            }
        }
        return changed;
    }

    /**
     * Two calls on one host key at once, round after round: a publish against a publish to
     * another container (the later commit wins) or against an unpublish. Each round must end
     * with {@code wanted} as the kernel has it, whichever commit the kernel took last.
     */
    @Test
    void aRacingPairOnOneKeyEndsAsTheKernelHasIt(NetworkNamespace host) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (SelfHealingDriver d = started(host, new CopyOnWriteArrayList<>());
             HealableDriver kernel = Gatun.open(host, "nftables")) {
            CyclicBarrier go = new CyclicBarrier(3);
            CyclicBarrier done = new CyclicBarrier(3);
            Future<?> first = pool.submit(() -> race(go, done, round -> d.publish(new PortRequest("n1", C1, port(8080, 80), "alice"))));
            Future<?> second = pool.submit(() -> race(go, done, round -> round % 2 == 0
                    ? d.publish(new PortRequest("n1", C2, port(8080, 90), "alice"))
                    : d.unpublish(new PortRequest("n1", C1, port(8080, 80), "alice"))));
            for (int round = 0; round < RACE_ROUNDS; round++) {
                go.await(1, TimeUnit.MINUTES);
                done.await(1, TimeUnit.MINUTES);
                assertThat(d.wanted()).as("wanted after round %d", round)
                        .containsExactlyInAnyOrderElementsOf(kernel.published(null));
            }
            first.get(1, TimeUnit.MINUTES);
            second.get(1, TimeUnit.MINUTES);
        } finally {
            // A failed round leaves the racers waiting at the barrier: interrupt them.
            pool.shutdownNow();
        }
    }

    private static Void race(CyclicBarrier go, CyclicBarrier done, IntFunction<List<PortMapping>> call) throws Exception {
        for (int round = 0; round < RACE_ROUNDS; round++) {
            go.await(1, TimeUnit.MINUTES);
            try {
                call.apply(round);
            } catch (NotFoundException e) {
                // The unpublish came first: nothing to remove.
            }
            done.await(1, TimeUnit.MINUTES);
        }
        return null;
    }

    /** Polls for up to a second; the issue allows a repair one second. */
    private static String awaitRuleset(NetworkNamespace ns, String expected) throws InterruptedException {
        String now = Oracle.in(ns, "nft", "list", "ruleset");
        for (int i = 0; i < 20 && !now.equals(expected); i++) {
            Thread.sleep(50);
            now = Oracle.in(ns, "nft", "list", "ruleset");
        }
        return now;
    }
}
