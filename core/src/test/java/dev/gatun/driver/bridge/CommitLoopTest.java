package dev.gatun.driver.bridge;

import dev.gatun.RetryableException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.sockdiag.BoundSocket;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static dev.gatun.driver.bridge.PortPlannerTest.mapping;
import static dev.gatun.driver.bridge.PortPlannerTest.publish;
import static dev.gatun.driver.bridge.PortPlannerTest.unpublish;
import static dev.gatun.driver.bridge.PortPlannerTest.wanted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The commit-and-retry loop against an in-memory store whose next read can be made stale (the
 * race of {@code PublisherRaceTest}, without root): a stale read leads to a fresh read and a new
 * plan, never to a lost or doubled mapping (the store refuses to add a key twice or to delete a
 * missing one), and the retries are bounded.
 */
class CommitLoopTest {

    private static final InetAddress A = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress INTRUDER = InetAddress.ofLiteral("10.88.0.9");

    private final InMemoryMappingStore store = new InMemoryMappingStore();
    private final List<PortMapping> flushed = new ArrayList<>();
    private final List<PortMapping> added = new ArrayList<>();
    private final CommitLoop.AfterCommit after = (f, a) -> {
        flushed.addAll(f);
        added.addAll(a);
    };
    private final CommitLoop loop = new CommitLoop(store, List::of, (batch, local) -> List.of(), after, "host1");

    @Test
    void anUnrelatedWriterCostsOneFreshReadAndLosesNothing() {
        store.staleNextRead(s -> s.put(mapping(null, 9090, INTRUDER, 80, "intruder")));

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("app", wanted(null, 8080, A, 80))), null);

        assertThat(answers.getFirst().mappings()).extracting(PortMapping::network, PortMapping::hostPort)
                .containsExactly(tuple("n1", 8080));
        assertThat(store.reads).as("the first read, and one after the refused commit").isEqualTo(2);
        assertThat(store.mappings()).extracting(PortMapping::hostPort, PortMapping::owner)
                .containsExactlyInAnyOrder(tuple(8080, "app"), tuple(9090, "intruder"));
    }

    @Test
    void aWriterThatTakesTheSameKeyFirstKeepsIt() {
        store.staleNextRead(s -> s.put(mapping(null, 8080, INTRUDER, 80, "intruder")));

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("app", wanted(null, 8080, A, 80))), null);

        assertThat(answers.getFirst().refused()).isInstanceOf(ConflictException.class).hasMessageContaining("8080")
                .hasMessageContaining("intruder");
        assertThat(store.reads).isEqualTo(2);
        assertThat(store.mappings()).extracting(PortMapping::owner).containsExactly("intruder");
    }

    /** An unpublish planned against the old owner's mapping does not delete the new owner's. */
    @Test
    void anUnpublishRacingAChangeOfOwnerLeavesTheNewOwnersMapping() {
        store.put(mapping(null, 8080, A, 80, "app"));
        store.staleNextRead(s -> {
            s.remove(mapping(null, 8080, A, 80, "app"));
            s.put(mapping(null, 8080, INTRUDER, 80, "intruder"));
        });

        List<PortPlanner.Answer> answers = loop.commit(List.of(unpublish("app", A, wanted(null, 8080, A, 80))), null);

        assertThat(answers.getFirst().refused()).isInstanceOf(NotFoundException.class)
                .hasMessageContaining("published to 10.88.0.9:80");
        assertThat(store.mappings()).extracting(PortMapping::owner).containsExactly("intruder");
    }

    @Test
    void aWriterThatNeverStopsMakesItGiveUpAfterBoundedAttempts() {
        store.staleEveryRead();

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("app", wanted(null, 8080, A, 80))), null);

        assertThat(answers.getFirst().refused()).isInstanceOf(GenerationConflictException.class)
                .hasMessageContaining("gave up after " + CommitLoop.MAX_ATTEMPTS + " attempts")
                .hasMessageContaining("publish to network n1 in host1");
        assertThat(((RetryableException) answers.getFirst().refused()).mayHaveApplied()).isFalse();
        assertThat(store.reads).as("one read per attempt, no more").isEqualTo(CommitLoop.MAX_ATTEMPTS);
        assertThat(store.mappings()).isEmpty();
    }

    /** Every request of a batch is planned again after a stale read: each mapping made once. */
    @Test
    void aStaleBatchIsReplannedWhole() {
        store.staleNextRead();
        store.staleNextRead(s -> s.put(mapping(null, 7070, INTRUDER, 80, "intruder")));

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("a", wanted(null, 8080, A, 80)),
                publish("b", wanted(null, 7070, A, 70)), publish("a", wanted(null, 8080, A, 80))), null);

        assertThat(answers.get(0).mappings()).extracting(PortMapping::hostPort).containsExactly(8080);
        assertThat(answers.get(1).refused()).isInstanceOf(ConflictException.class).hasMessageContaining("intruder");
        assertThat(answers.get(2).mappings()).extracting(PortMapping::hostPort).containsExactly(8080);
        assertThat(store.reads).isEqualTo(3);
        assertThat(store.mappings()).extracting(PortMapping::hostPort, PortMapping::owner)
                .containsExactlyInAnyOrder(tuple(8080, "a"), tuple(7070, "intruder"));
    }

    /** A lost reply is not a lost commit: a publish applied whose reply never came is read back and reported done. */
    @Test
    void aPublishWhoseReplyWasLostIsFoundInPlaceAndReportedDone() {
        store.loseNextReply(true);
        List<String> heard = new ArrayList<>();

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("app", wanted(null, 8080, A, 80))), new HeardCommits(heard));

        assertThat(answers.getFirst().mappings()).extracting(PortMapping::hostPort).containsExactly(8080);
        assertThat(store.reads).as("a fresh read after the lost reply").isEqualTo(2);
        assertThat(store.commits).as("nothing committed twice").isEqualTo(1);
        assertThat(heard).containsExactly("+n1 8080 app");
        assertThat(added).as("its UDP clients are looked after as if the reply had come")
                .extracting(PortMapping::hostPort).containsExactly(8080);
    }

    @Test
    void anUnpublishWhoseReplyWasLostIsReportedDoneAndItsUdpEntriesFlushed() {
        PortMapping udp = new PortMapping(null, Protocol.UDP, null, 5353, A, 53, "app");
        store.put(udp);
        store.loseNextReply(true);

        List<PortPlanner.Answer> answers = loop.commit(List.of(new CommitRequest.Unpublish("n1",
                new Publisher.Selection(A, List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, A, 53)), "app", null))),
                null);

        assertThat(answers.getFirst().mappings()).extracting(PortMapping::hostPort).containsExactly(5353);
        assertThat(flushed).containsExactly(udp);
        assertThat(store.mappings()).isEmpty();
    }

    @Test
    void anUnpublishOfAllWhoseReplyWasLostIsReportedDone() {
        store.put(mapping(null, 8080, A, 80, "app"));
        store.put(mapping(null, 8081, A, 80, "app"));
        store.loseNextReply(true);

        List<PortPlanner.Answer> answers = loop.commit(List.of(new CommitRequest.Unpublish("n1",
                new Publisher.Selection(A, null, "app", m -> m.owner().equals("app")))), null);

        assertThat(answers.getFirst().mappings()).extracting(PortMapping::hostPort).containsExactlyInAnyOrder(8080, 8081);
        assertThat(store.mappings()).isEmpty();
    }

    /** No answer to any commit, and none applied: a bounded number of fresh reads, then a retryable failure. */
    @Test
    void aStoreThatNeverAnswersEndsInARetryableFailureAfterBoundedAttempts() {
        for (int i = 0; i <= CommitLoop.MAX_LOST_REPLIES; i++) {
            store.loseNextReply(false);
        }

        List<PortPlanner.Answer> answers = loop.commit(List.of(publish("app", wanted(null, 8080, A, 80))), null);

        assertThat(answers.getFirst().refused()).isInstanceOf(ReplyTimeoutException.class);
        assertThat(((RetryableException) answers.getFirst().refused()).mayHaveApplied()).isTrue();
        assertThat(store.commits).as("the first try and three more, each after a fresh read")
                .isEqualTo(CommitLoop.MAX_LOST_REPLIES + 1);
        assertThat(store.mappings()).isEmpty();
    }

    /** The listener hears what was committed, named, and not a refused request; moved UDP mappings are flushed. */
    @Test
    void theListenerHearsCommitsOnlyAndMovedUdpMappingsAreFlushed() {
        PortMapping udp = new PortMapping(null, Protocol.UDP, null, 5353, A, 53, "app");
        store.put(udp);
        store.put(mapping(null, 8080, A, 80, "other"));
        List<String> heard = new ArrayList<>();

        List<PortPlanner.Answer> answers = loop.commit(List.of(
                new CommitRequest.Publish("n1", List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, INTRUDER, 53)), "app",
                        true),
                publish("app", wanted(null, 8080, A, 80))), new HeardCommits(heard));

        assertThat(answers.get(1).refused()).isInstanceOf(ConflictException.class);
        assertThat(heard).containsExactly("+n1 5353 app");
        assertThat(flushed).containsExactly(udp);
    }

    /**
     * The host's sockets are asked only for a key gatun does not hold: a replace of another
     * owner's key and a publish again by its own owner ask nothing; a new key asks once per
     * batch, also when a stale read makes the batch planned again.
     */
    @Test
    void theHostsSocketsAreAskedOnlyForAKeyGatunDoesNotHold() {
        int[] asked = {0};
        CommitLoop counting = new CommitLoop(store, List::of, (batch, local) -> {
            asked[0]++;
            return List.of();
        }, after, "host1");
        store.put(mapping(null, 8080, A, 80, "old"));

        CommitRequest replace = new CommitRequest.Publish("n1", List.of(wanted(null, 8080, INTRUDER, 80)), "new", true,
                Set.of(), CommitRequest.Replace.DELETING_UDP_FLOWS);
        assertThat(counting.commit(List.of(replace), null).getFirst().replaced()).extracting(PortMapping::owner)
                .containsExactly("old");
        assertThat(counting.commit(List.of(publish("new", wanted(null, 8080, A, 80))), null).getFirst().refused())
                .isNull();
        assertThat(asked[0]).as("a replace and a publish again of a held key").isZero();

        store.staleNextRead(s -> s.put(mapping(null, 9090, A, 80, "intruder")));
        assertThat(counting.commit(List.of(publish("new", wanted(null, 7070, A, 80), wanted(null, 7071, A, 80))),
                null).getFirst().refused()).isNull();
        assertThat(store.reads).as("the stale read and the fresh one").isEqualTo(4);
        assertThat(asked[0]).as("two new keys, planned twice").isEqualTo(1);
    }

    /** A socket on a new key still refuses it, found by the question asked at its need. */
    @Test
    void aSocketOnANewKeyStillRefusesIt() {
        BoundSocket listening = new BoundSocket(false, 6,
                InetAddress.ofLiteral("0.0.0.0"), 7070, false, 0, 4242L);
        CommitLoop withAService = new CommitLoop(store, List::of, (batch, local) -> List.of(listening),
                after, "host1");

        RuntimeException refused = withAService.commit(List.of(publish("new", wanted(null, 7070, A, 80))), null)
                .getFirst().refused();

        assertThat(refused).isInstanceOf(ConflictException.class).hasMessageContaining("7070");
        assertThat(store.mappings()).isEmpty();
    }
}
