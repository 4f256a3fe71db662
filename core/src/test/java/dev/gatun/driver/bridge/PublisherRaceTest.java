package dev.gatun.driver.bridge;

import dev.gatun.RetryableException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Network;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.foreign.ForeignFirewalls;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Expect;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Another {@code nft} process commits between gatun's read and its commit, every time at the
 * same deterministic point: the store runs the writer just before it commits what it planned
 * from its read. The guarded commit must be refused, planned again from a fresh read, and end
 * with no mapping lost and none doubled; a writer that never stops makes it give up after a
 * bounded number of attempts with a retryable failure.
 */
@ExtendWith(FreshNamespaces.class)
class PublisherRaceTest {

    private static final InetAddress A = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress INTRUDER = InetAddress.ofLiteral("10.88.0.9");

    @Test
    void anUnrelatedWriterCostsOneFreshReadAndLosesNothing(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> n == 1, n -> intrude(host, 9090));
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            List<PortMapping> made = publisher.publish("n1", List.of(tcp(8080, A)), "app");

            assertThat(made).extracting(PortMapping::hostPort).containsExactly(8080);
            assertThat(firewall.reads).as("reads: the first, and one after the refused commit").hasValue(2);
            assertThat(ports4(host)).containsOnlyOnce("tcp . 8080 comment \"app\" : 10.88.0.2 . 80")
                    .containsOnlyOnce("tcp . 9090 comment \"intruder\" : 10.88.0.9 . 80");
            assertThat(firewall.mappings()).extracting(PortMapping::hostPort, PortMapping::owner)
                    .containsExactlyInAnyOrder(tuple(8080, "app"),
                            tuple(9090, "intruder"));
        }
    }

    @Test
    void aWriterThatTakesTheSameKeyFirstKeepsIt(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> n == 1, n -> intrude(host, 8080));
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            ConflictException e = Expect.thrown(ConflictException.class,
                    () -> publisher.publish("n1", List.of(tcp(8080, A)), "app"));

            assertThat(e.getMessage()).contains("8080").contains("intruder");
            assertThat(firewall.reads).hasValue(2);
            assertThat(ports4(host)).containsOnlyOnce("tcp . 8080 ")
                    .contains("tcp . 8080 comment \"intruder\" : 10.88.0.9 . 80");
        }
    }

    /** An unpublish planned against the old owner's mapping does not delete the new owner's. */
    @Test
    void anUnpublishRacingAChangeOfOwnerLeavesTheNewOwnersMapping(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> n == 2, n -> {
            Oracle.Result r = Oracle.nftFile(host, "delete element inet gatun ports4 { tcp . 8080 }\n"
                    + "add element inet gatun ports4 { tcp . 8080 comment \"intruder\" : 10.88.0.9 . 80 }\n");
            assertThat(r.exitCode()).as(r.stderr()).isZero();
        });
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            publisher.publish("n1", List.of(tcp(8080, A)), "app");

            NotFoundException e = Expect.thrown(NotFoundException.class, () -> publisher.unpublish("n1",
                    new Publisher.Selection(A, List.of(tcp(8080, A)), "app", null)));

            assertThat(e.getMessage()).as("judged by the fresh read").contains("published to 10.88.0.9:80");
            assertThat(firewall.reads).as("the publish's read, the unpublish's, and its fresh one").hasValue(3);
            assertThat(ports4(host)).containsOnlyOnce("tcp . 8080 ")
                    .contains("tcp . 8080 comment \"intruder\" : 10.88.0.9 . 80");
        }
    }

    /** A writer that commits before every one of gatun's commits: gatun stops, retryably, and left nothing half done. */
    @Test
    void aWriterThatNeverStopsMakesItGiveUpAfterBoundedAttempts(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> true, n -> intrude(host, 20_000 + n));
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            GenerationConflictException e = Expect.thrown(GenerationConflictException.class,
                    () -> publisher.publish("n1", List.of(tcp(8080, A)), "app"));

            assertThat(e).isInstanceOf(RetryableException.class);
            assertThat(e.mayHaveApplied()).isFalse();
            assertThat(e.getMessage()).contains("gave up after 200 attempts").contains("publish to network n1");
            assertThat(firewall.reads).as("one read per attempt, no more").hasValue(200);
            assertThat(ports4(host)).doesNotContain("tcp . 8080 ").containsOnlyOnce("tcp . 20200 ");
        }
    }

    /** A lost reply is not a lost commit: a publish applied whose ACK never came is read back and reported done. */
    @Test
    void aPublishWhoseReplyWasLostIsFoundInPlaceAndReportedDone(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> false, n -> { });
        firewall.loseReply = n -> n == 1;
        List<String> heard = new ArrayList<>();
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            publisher.listen(new HeardCommits(heard));
            List<PortMapping> made = publisher.publish("n1", List.of(tcp(8080, A)), "app");

            assertThat(made).extracting(PortMapping::hostPort, PortMapping::owner).containsExactly(tuple(8080, "app"));
            assertThat(firewall.reads).as("a fresh read after the lost reply").hasValue(2);
            assertThat(firewall.commits).as("nothing committed twice").hasValue(1);
            assertThat(heard).containsExactly("+n1 8080 app");
            assertThat(ports4(host)).containsOnlyOnce("tcp . 8080 ");
        }
    }

    /** An unpublish applied whose ACK never came is reported done, not as "not published" from the fresh read. */
    @Test
    void anUnpublishWhoseReplyWasLostIsReportedDone(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> false, n -> { });
        firewall.loseReply = n -> n == 2;
        List<String> heard = new ArrayList<>();
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            publisher.listen(new HeardCommits(heard));
            publisher.publish("n1", List.of(tcp(8080, A), tcp(8081, A)), "app");

            List<PortMapping> removed = publisher.unpublish("n1",
                    new Publisher.Selection(A, List.of(tcp(8080, A)), "app", null));

            assertThat(removed).extracting(PortMapping::hostPort).containsExactly(8080);
            assertThat(firewall.commits).hasValue(2);
            assertThat(heard).containsExactly("+n1 8080 app", "+n1 8081 app", "-n1 8080 app");
            assertThat(ports4(host)).doesNotContain("tcp . 8080 ").containsOnlyOnce("tcp . 8081 ");
        }
    }

    /** The same for an unpublish of everything an owner published to a container. */
    @Test
    void anUnpublishOfAllWhoseReplyWasLostIsReportedDone(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> false, n -> { });
        firewall.loseReply = n -> n == 2;
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            publisher.publish("n1", List.of(tcp(8080, A), tcp(8081, A)), "app");

            List<PortMapping> removed = publisher.unpublish("n1", new Publisher.Selection(A, null, "app",
                    m -> m.containerIp().equals(A) && m.owner().equals("app")));

            assertThat(removed).extracting(PortMapping::hostPort).containsExactlyInAnyOrder(8080, 8081);
            assertThat(ports4(host)).doesNotContain("tcp . 808");
        }
    }

    /**
     * No answer to any commit (and none applied): a bounded number of fresh reads and commits,
     * then the caller is told, retryably, that the change may have been made.
     */
    @Test
    void aKernelThatNeverAnswersEndsInARetryableFailureAfterBoundedAttempts(NetworkNamespace host) {
        Racing firewall = new Racing(host, n -> false, n -> { });
        firewall.loseReply = n -> true;
        firewall.applyLostCommits = false;
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            ReplyTimeoutException e = Expect.thrown(ReplyTimeoutException.class,
                    () -> publisher.publish("n1", List.of(tcp(8080, A)), "app"));

            assertThat(e.mayHaveApplied()).isTrue();
            assertThat(firewall.commits).as("the first try and three more, each after a fresh read").hasValue(4);
            assertThat(firewall.reads).hasValue(4);
            assertThat(ports4(host)).doesNotContain("tcp . 8080 ");
        }
    }

    private static Publisher.Wanted tcp(int hostPort, InetAddress container) {
        return new Publisher.Wanted(Protocol.TCP, null, hostPort, container, 80);
    }

    /** What another process writes: a mapping of its own on {@code port}. */
    private static void intrude(NetworkNamespace host, int port) {
        Oracle.in(host, "nft", "add", "element", "inet", "gatun", "ports4",
                "{ tcp . " + port + " comment \"intruder\" : " + INTRUDER.getHostAddress() + " . 80 }");
    }

    private static String ports4(NetworkNamespace host) {
        return Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4");
    }

    /**
     * gatun's nftables firewall whose store runs {@code writer} between the read and the commit
     * of each commit numbered (from 1) as {@code when} says: the race, made to happen.
     */
    private static final class Racing implements Firewall {
        final NftablesFirewall real;
        final IntPredicate when;
        final IntConsumer writer;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicInteger commits = new AtomicInteger();
        /** Which commits lose their reply: applied, but the caller hears a timeout. */
        IntPredicate loseReply = n -> false;
        /** Whether a commit whose reply is lost was applied first (a lost ACK) or not (a kernel that never answered). */
        boolean applyLostCommits = true;

        Racing(NetworkNamespace host, IntPredicate when, IntConsumer writer) {
            this.real = new NftablesFirewall(host);
            this.when = when;
            this.writer = writer;
            real.ensure(List.of());
        }

        @Override
        public MappingStore openStore(Supplier<CountedSubnets> counted) {
            MappingStore store = real.openStore(counted);
            return new MappingStore() {
                @Override
                public View begin() {
                    reads.incrementAndGet();
                    View view = store.begin();
                    return new View() {
                        @Override
                        public Optional<PortMapping> get(PortMapping key) {
                            return view.get(key);
                        }

                        @Override
                        public List<PortMapping> all() {
                            return view.all();
                        }

                        @Override
                        public List<Optional<PortMapping>> getAll(List<PortMapping> keys) {
                            return view.getAll(keys);
                        }

                        @Override
                        public void commit(Collection<PortMapping> deletes, Collection<PortMapping> adds) {
                            int n = commits.incrementAndGet();
                            if (when.test(n)) {
                                writer.accept(n);
                            }
                            if (applyLostCommits || !loseReply.test(n)) {
                                view.commit(deletes, adds);
                            }
                            if (loseReply.test(n)) {
                                throw new ReplyTimeoutException("commit " + n, Duration.ofMillis(1));
                            }
                        }
                    };
                }

                @Override
                public void close() {
                    store.close();
                }
            };
        }

        @Override
        public String name() {
            return real.name();
        }

        @Override
        public void ensure(List<Network> existing) {
            real.ensure(existing);
        }

        @Override
        public void network(BridgeRules rules, boolean add) {
            real.network(rules, add);
        }

        @Override
        public void outside(OutsideTarget target, boolean add) {
            real.outside(target, add);
        }

        @Override
        public List<OutsideTarget> outsideTargets() {
            return real.outsideTargets();
        }

        @Override
        public void teardown() {
            real.teardown();
        }

        @Override
        public boolean guardsLoopback() {
            return real.guardsLoopback();
        }

        @Override
        public Restored restore(List<Network> networks, List<PortMapping> wanted) {
            return real.restore(networks, wanted);
        }

        @Override
        public ForeignFirewalls foreignFirewalls() {
            return real.foreignFirewalls();
        }

        @Override
        public List<PortMapping> mappings() {
            return real.mappings();
        }
    }
}
