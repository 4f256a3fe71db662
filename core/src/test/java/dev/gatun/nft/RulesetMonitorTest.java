package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(FreshNamespaces.class)
class RulesetMonitorTest {

    @Test
    void listenerSeesATableDeletedFromOutside(NetworkNamespace a) throws InterruptedException {
        Table gatun = Table.of(Family.IP, "gatun");
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(gatun).add(Chain.regular(gatun, "c")).commit();
        }
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        try (RulesetMonitor monitor = RulesetMonitor.start(a, events::add)) {
            Oracle.in(a, "nft", "delete", "table", "ip", "gatun");

            RulesetEvent deleted = null;
            for (RulesetEvent e = events.poll(10, TimeUnit.SECONDS); e != null; e = events.poll(2, TimeUnit.SECONDS)) {
                if (e.kind() == RulesetEvent.Kind.DELETE_TABLE) {
                    deleted = e;
                    break;
                }
            }
            assertThat(deleted).usingRecursiveComparison().ignoringFields("committer")
                    .isEqualTo(new RulesetEvent(RulesetEvent.Kind.DELETE_TABLE, Family.IP, "gatun", "gatun"));
            assertThat(deleted.committer()).as("the nft process's thread").isPositive();
            assertThat(deleted.byThisProcess()).isFalse();
        }
    }

    @Test
    void listenerSeesElementsFlushedFromOutside(NetworkNamespace a) throws InterruptedException {
        Table gatun = Table.of(Family.IP, "gatun");
        NftSet set = NftSet.of(gatun, "bridges", DataType.IFNAME);
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(gatun).add(set).addElements(set, List.of(Element.of("gatun0"))).commit();
        }
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        try (RulesetMonitor monitor = RulesetMonitor.start(a, events::add)) {
            Oracle.in(a, "nft", "flush", "set", "ip", "gatun", "bridges");
            RulesetEvent e = events.poll(10, TimeUnit.SECONDS);
            while (e != null && e.kind() != RulesetEvent.Kind.DELETE_ELEMENTS) {
                e = events.poll(2, TimeUnit.SECONDS);
            }
            assertThat(e).usingRecursiveComparison().ignoringFields("committer")
                    .isEqualTo(new RulesetEvent(RulesetEvent.Kind.DELETE_ELEMENTS, Family.IP, "gatun", "bridges"));
            assertThat(e.byThisProcess()).isFalse();
        }
    }

    /**
     * The kernel notifies every element on its own: one commit of 300 elements in two sets is
     * 300 notifications, and one event per set. Each names its table and set and family.
     */
    @Test
    void aCommitsElementsAreOneEventPerSet(NetworkNamespace a) throws InterruptedException {
        Table other = Table.of(Family.INET, "other");
        NftSet first = NftSet.of(other, "first", DataType.IFNAME);
        NftSet second = NftSet.of(other, "second", DataType.IFNAME);
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(other).add(first).add(second).commit();
        }
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        try (RulesetMonitor monitor = RulesetMonitor.start(a, events::add); Nftables nft = Nftables.open(a)) {
            List<Element> names = IntStream.range(0, 150).mapToObj(i -> Element.of("veth" + i)).toList();
            nft.transaction().addElements(first, names).addElements(second, names).commit();

            List<RulesetEvent> seen = new ArrayList<>();
            for (RulesetEvent e = events.poll(10, TimeUnit.SECONDS); e != null; e = events.poll(2, TimeUnit.SECONDS)) {
                seen.add(e);
                if (e.kind() == RulesetEvent.Kind.NEW_GENERATION) {
                    break;
                }
            }
            assertThat(seen).map(e -> new RulesetEvent(e.kind(), e.family(), e.table(), e.name())).containsExactly(
                    new RulesetEvent(RulesetEvent.Kind.NEW_ELEMENTS, Family.INET, "other", "first"),
                    new RulesetEvent(RulesetEvent.Kind.NEW_ELEMENTS, Family.INET, "other", "second"),
                    new RulesetEvent(RulesetEvent.Kind.NEW_GENERATION, null, null, null));
            assertThat(Oracle.in(a, "nft", "list", "set", "inet", "other", "second"))
                    .as("the oracle sees what the events stand for").contains("veth149");
        }
    }

    @Test
    void aChangeThisProcessCommittedSaysSo(NetworkNamespace a) throws InterruptedException {
        Table gatun = Table.of(Family.IP, "gatun");
        NftSet set = NftSet.of(gatun, "bridges", DataType.IFNAME);
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(gatun).add(set).addElements(set, List.of(Element.of("gatun0"))).commit();
        }
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        try (RulesetMonitor monitor = RulesetMonitor.start(a, events::add); Nftables nft = Nftables.open(a)) {
            // Committed from another thread of this process, which lives on (as serve's request
            // threads do): the kernel names that thread. A thread that has ended by the time the
            // event is read is not recognised; its change then only wakes a repair that finds nothing.
            CountDownLatch seen = new CountDownLatch(1);
            Thread t = Thread.ofPlatform().start(() -> {
                nft.transaction().deleteElements(set, List.of(Element.of("gatun0"))).commit();
                try {
                    seen.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException ignored) {
                    // the test is over
                }
            });
            RulesetEvent e = events.poll(10, TimeUnit.SECONDS);
            while (e != null && e.kind() != RulesetEvent.Kind.DELETE_ELEMENTS) {
                e = events.poll(2, TimeUnit.SECONDS);
            }
            try {
                assertThat(e).isNotNull();
                assertThat(e.byThisProcess()).as("committed by thread %d", e.committer()).isTrue();
            } finally {
                seen.countDown();
                Bounded.join(t, "the committing thread");
            }
        }
    }

    /**
     * A listener that cannot keep up (here: held until the flood is over) and a small queue: the
     * kernel drops notifications and says so with ENOBUFS; the listener is told to read again.
     */
    @Test
    void aFullQueueOverrunsAndTheListenerIsToldToReadEverythingAgain(NetworkNamespace a) throws InterruptedException {
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        CountDownLatch flooded = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        try (RulesetMonitor monitor = RulesetMonitor.start(a, e -> {
            held.countDown();
            try {
                flooded.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
            }
            events.add(e);
        }, 8192)) {
            // A first change, so the listener is held before the flood comes: the reader reads
            // no more, and the kernel queues until the queue is full.
            Oracle.in(a, "nft", "add", "table", "ip", "first");
            assertThat(held.await(10, TimeUnit.SECONDS)).as("the listener got the first change").isTrue();
            StringBuilder script = new StringBuilder("table ip other {\n  set s { type ipv4_addr; }\n}\n");
            for (int i = 0; i < 20; i++) {
                // One transaction of 20,000 elements: far more than 8 KiB of notifications.
                script.append("add element ip other s { ");
                for (int j = 0; j < 1000; j++) {
                    script.append(j == 0 ? "" : ", ").append("10.").append(1 + i).append('.').append(j / 256).append('.').append(j % 256);
                }
                script.append(" }\n");
            }
            Oracle.Result r = Oracle.nftFile(a, script.toString());
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            Oracle.in(a, "nft", "add", "element", "ip", "other", "s", "{ 10.2.0.1 }");
            flooded.countDown();

            RulesetEvent e = events.poll(10, TimeUnit.SECONDS);
            while (e != null && e.kind() != RulesetEvent.Kind.OVERRUN) {
                e = events.poll(2, TimeUnit.SECONDS);
            }
            assertThat(e).as("an OVERRUN event").isNotNull();
            assertThat(monitor.overruns()).as("ENOBUFS seen").isPositive();
            // The monitor reads on after an overrun: a later change is delivered as usual.
            Oracle.in(a, "nft", "delete", "table", "ip", "other");
            e = events.poll(10, TimeUnit.SECONDS);
            while (e != null && e.kind() != RulesetEvent.Kind.DELETE_TABLE) {
                e = events.poll(2, TimeUnit.SECONDS);
            }
            assertThat(e).as("the table's deletion, after the overrun").isNotNull();
        }
    }
}
