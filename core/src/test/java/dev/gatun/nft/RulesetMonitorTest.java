package dev.gatun.nft;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

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
            nft.transaction().add(gatun).add(set).addElements(set, java.util.List.of(Element.of("gatun0"))).commit();
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

    @Test
    void aChangeThisProcessCommittedSaysSo(NetworkNamespace a) throws InterruptedException {
        Table gatun = Table.of(Family.IP, "gatun");
        NftSet set = NftSet.of(gatun, "bridges", DataType.IFNAME);
        try (Nftables nft = Nftables.open(a)) {
            nft.transaction().add(gatun).add(set).addElements(set, java.util.List.of(Element.of("gatun0"))).commit();
        }
        LinkedBlockingQueue<RulesetEvent> events = new LinkedBlockingQueue<>();
        try (RulesetMonitor monitor = RulesetMonitor.start(a, events::add); Nftables nft = Nftables.open(a)) {
            // Committed from another thread of this process, which lives on (as serve's request
            // threads do): the kernel names that thread. A thread that has ended by the time the
            // event is read is not recognised; its change then only wakes a repair that finds nothing.
            CountDownLatch seen = new CountDownLatch(1);
            Thread t = Thread.ofPlatform().start(() -> {
                nft.transaction().deleteElements(set, java.util.List.of(Element.of("gatun0"))).commit();
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
                t.join();
            }
        }
    }
}
