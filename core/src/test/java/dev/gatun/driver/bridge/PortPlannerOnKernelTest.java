package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.NftSet;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.RulesetMonitor;
import dev.gatun.nft.Transaction;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.SkipWithoutPrivileges;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The planner's cases ({@link PortPlannerPropertiesTest}'s generators: few ports, addresses and
 * owners, so that they collide) against the kernel's maps, through both stores a driver uses:
 * the one that reads before each plan and the one that plans from memory in step with the
 * kernel's notifications. Each case puts what is present with a transaction of its own (a
 * change the memory must notice), then commits two rounds of publishes; every answer, refusals
 * with their messages included, and every map's content must be what the store in memory,
 * whose properties the planner's tests check, gives for the same case.
 */
@AddLifecycleHook(SkipWithoutPrivileges.class)
class PortPlannerOnKernelTest {

    private static final List<InetAddress> HOST_ADDRESSES = List.of(InetAddress.ofLiteral("192.0.2.10"),
            InetAddress.ofLiteral("fd00:1::10"));
    private static final String READ_NS = FreshNamespaces.PREFIX + ProcessHandle.current().pid() + "-planner-read";
    private static final String FOLLOWED_NS = FreshNamespaces.PREFIX + ProcessHandle.current().pid() + "-planner-followed";

    private static Nftables readNft;
    private static Nftables followedNft;
    private static NftablesMappingStore read;
    private static FollowedMappingStore followed;
    private static MapChanges changes;
    private static RulesetMonitor monitor;
    private static int tries;

    private final PortPlannerPropertiesTest generators = new PortPlannerPropertiesTest();

    @BeforeContainer
    static void twoNamespaces() {
        FreshNamespaces.requirePrivileges();
        NetworkNamespace readNs = NamedNamespaces.create(READ_NS);
        NetworkNamespace followedNs = NamedNamespaces.create(FOLLOWED_NS);
        new NftablesFirewall(readNs).ensure(List.of());
        new NftablesFirewall(followedNs).ensure(List.of());
        changes = new MapChanges();
        monitor = RulesetMonitor.start(followedNs, changes);
        readNft = Nftables.open(readNs);
        followedNft = Nftables.open(followedNs);
        read = new NftablesMappingStore(Nftables.open(readNs), () -> CountedSubnets.NONE);
        followed = new FollowedMappingStore(Nftables.open(followedNs), () -> CountedSubnets.NONE, changes);
    }

    @AfterContainer
    static void deleteThem() {
        for (AutoCloseable c : new AutoCloseable[] {monitor, readNft, followedNft, read, followed}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the namespaces go below all the same
            }
        }
        for (String ns : List.of(READ_NS, FOLLOWED_NS)) {
            if (NamedNamespaces.exists(ns)) {
                NamedNamespaces.delete(ns);
            }
        }
    }

    @Provide
    Arbitrary<List<Publisher.Wanted>> present() {
        return generators.present();
    }

    @Provide
    Arbitrary<List<List<Publisher.Wanted>>> batches() {
        return generators.batches();
    }

    @Property(tries = 300)
    void theReadingAndTheRememberingStoreAnswerAsTheStoreInMemory(@ForAll("present") List<Publisher.Wanted> present,
                                                                  @ForAll("batches") List<List<Publisher.Wanted>> first,
                                                                  @ForAll("batches") List<List<Publisher.Wanted>> second) {
        InMemoryMappingStore memory = new InMemoryMappingStore();
        List<PortMapping> held = held(present);
        held.forEach(memory::put);
        replace(readNft, held);
        int before = followedNft.generation();
        replace(followedNft, held);
        int after = followedNft.generation();
        // Every other try lets the memory hear the change first (if it changed anything); the others race it.
        boolean heardFirst = tries++ % 2 == 0;
        if (heardFirst && after != before) {
            awaitHeard(after);
        }
        List<List<List<Publisher.Wanted>>> rounds = List.of(first, second);
        for (int r = 0; r < rounds.size(); r++) {
            // By position: the two rounds may be one object (jqwik hands out edge cases again).
            List<List<Publisher.Wanted>> round = rounds.get(r);
            boolean later = r == 1;
            List<String> expected = commit(memory, round, later);
            assertThat(commit(read, round, later)).isEqualTo(expected);
            long readsBefore = followed.reads();
            assertThat(commit(followed, round, later)).isEqualTo(expected);
            if (later && heardFirst) {
                assertThat(followed.reads()).as("the second round is planned from memory").isEqualTo(readsBefore);
            }
            List<String> inMemory = sorted(memory.mappings());
            assertThat(sorted(MappingElements.all(readNft))).isEqualTo(inMemory);
            assertThat(sorted(MappingElements.all(followedNft))).isEqualTo(inMemory);
        }
    }

    /** Waits (boundedly) until the reader handed over the NEWGEN of {@code generation}. */
    private static void awaitHeard(int generation) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!changes.heard(generation)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the notification of generation " + generation + " never came");
            }
            Thread.onSpinWait();
        }
    }

    /** What a case holds: one owner's mappings, the last one on a key kept, as the store in memory keeps them. */
    private static List<PortMapping> held(List<Publisher.Wanted> present) {
        Map<PortMapping.HostKey, PortMapping> byKey = new LinkedHashMap<>();
        for (Publisher.Wanted w : present) {
            PortMapping m = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(),
                    w.containerPort(), "old");
            byKey.put(m.hostKey(), m);
        }
        return List.copyOf(byKey.values());
    }

    /** Empties the four maps and puts {@code held} in, in one transaction of another writer. */
    private static void replace(Nftables nft, List<PortMapping> held) {
        Transaction tx = nft.transaction();
        for (NftSet map : MappingElements.MAPS) {
            tx.flush(map);
        }
        if (!held.isEmpty()) {
            MappingElements.group(held, m -> MappingElements.element(m, false)).forEach(tx::addStored);
        }
        tx.commit();
    }

    /** Commits one round of publishes, each by an owner of its own, through the commit loop; the answers as text. */
    private static List<String> commit(MappingStore store, List<List<Publisher.Wanted>> round, boolean later) {
        List<CommitRequest> requests = new ArrayList<>();
        for (int i = 0; i < round.size(); i++) {
            requests.add(new CommitRequest.Publish("n1", round.get(i), (later ? "later-" : "owner-") + i, false));
        }
        CommitLoop loop = new CommitLoop(store, () -> HOST_ADDRESSES, (batch, addresses) -> List.of(), (flushed, added) -> {},
                "host1");
        List<String> out = new ArrayList<>();
        for (PortPlanner.Answer a : loop.commit(requests, null)) {
            out.add(a.refused() == null ? a.mappings().toString()
                    : a.refused().getClass().getSimpleName() + ": " + a.refused().getMessage());
        }
        return out;
    }

    private static List<String> sorted(List<PortMapping> mappings) {
        return mappings.stream().map(m -> new PortMapping(null, m.protocol(), m.hostIp(), m.hostPort(), m.containerIp(),
                m.containerPort(), m.owner()).toString()).sorted().toList();
    }
}
