package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.sockdiag.BoundSocket;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The planner against an in-memory store: no root, no kernel. */
class PortPlannerTest {

    private static final InetAddress A = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress B = InetAddress.ofLiteral("10.88.0.3");
    private static final InetAddress A6 = InetAddress.ofLiteral("fd00::2");
    private static final InetAddress HOST = InetAddress.ofLiteral("192.0.2.10");
    private static final InetAddress LOOPBACK = InetAddress.ofLiteral("127.0.0.1");
    private static final int TCP = 6;

    private final InMemoryMappingStore store = new InMemoryMappingStore();

    @Test
    void aPortHeldByAnotherOwnerIsRefusedNamingThePortAndTheHolder() {
        store.put(mapping(null, 8080, A, 80, "web-1"));

        PortPlanner.BatchPlan plan = plan(publish("web-2", wanted(null, 8080, B, 80)));

        assertThat(refused(plan, 0)).isInstanceOf(ConflictException.class)
                .hasMessageContaining("*:8080/tcp").hasMessageContaining("web-1").hasMessageContaining("10.88.0.2:80");
        assertThat(plan.changes()).isFalse();
    }

    @Test
    void theSameMappingAgainIsKeptAndNotAddedTwice() {
        PortMapping old = mapping(null, 8080, A, 80, "app");
        store.put(old);

        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 8080, A, 80)));

        assertThat(plan.answers().getFirst().mappings()).containsExactly(old);
        assertThat(plan.changes()).isFalse();
    }

    @Test
    void anOwnerMovingItsPortDeletesTheOldMappingAndFlushesIt() {
        PortMapping old = mapping(null, 8080, A, 80, "app");
        store.put(old);

        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 8080, B, 80)));

        assertThat(plan.delete()).containsExactly(old);
        assertThat(plan.add()).extracting(PortMapping::containerIp).containsExactly(B);
        assertThat(plan.flush()).containsExactly(old);
    }

    @Test
    void everyAddressOverlapsAnotherOwnersPortOnOneHostAddress() {
        store.put(mapping(HOST, 8080, A, 80, "bound"));

        assertThat(refused(plan(List.of(HOST), publish("any", wanted(null, 8080, B, 80))), 0))
                .isInstanceOf(ConflictException.class).hasMessageContaining("*:8080/tcp").hasMessageContaining("bound");
        // Only through the host's addresses: one the host does not have is no overlap.
        assertThat(plan(List.of(LOOPBACK), publish("any", wanted(null, 8080, B, 80))).answers().getFirst().refused())
                .isNull();
    }

    @Test
    void oneAddressOverlapsAnotherOwnersPortOnEveryAddress() {
        store.put(mapping(null, 8080, A, 80, "any"));

        assertThat(refused(plan(List.of(HOST), publish("bound", wanted(HOST, 8080, B, 80))), 0))
                .isInstanceOf(ConflictException.class).hasMessageContaining("192.0.2.10:8080/tcp")
                .hasMessageContaining("any");
    }

    @Test
    void overlapsOfOneOwnerAndOfAnotherFamilyAreAllowed() {
        store.put(mapping(null, 8080, A, 80, "app"));
        store.put(mapping(null, 9090, A6, 80, "v6"));

        PortPlanner.BatchPlan plan = plan(List.of(HOST), publish("app", wanted(HOST, 8080, B, 80)),
                publish("v4", wanted(HOST, 9090, B, 80)));

        assertThat(plan.answers()).extracting(PortPlanner.Answer::refused).containsOnlyNulls();
        assertThat(plan.add()).hasSize(2);
    }

    @Test
    void aHostPortTwiceInOneRequestIsRefused() {
        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 8080, A, 80), wanted(null, 8080, B, 81)));

        assertThat(refused(plan, 0)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("*:8080/tcp is published twice in one request");
        assertThat(plan.changes()).isFalse();
    }

    @Test
    void twoOwnersWantingOnePortInOneBatchTheFirstGetsIt() {
        PortPlanner.BatchPlan plan = plan(publish("first", wanted(null, 8080, A, 80)),
                publish("second", wanted(null, 8080, B, 80)));

        assertThat(plan.answers().getFirst().mappings()).extracting(PortMapping::owner).containsExactly("first");
        assertThat(refused(plan, 1)).isInstanceOf(ConflictException.class).hasMessageContaining("first");
        assertThat(plan.add()).extracting(PortMapping::owner).containsExactly("first");
    }

    @Test
    void oneOwnerAskingTwiceInOneBatchIsMergedIntoOneAdd() {
        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 8080, A, 80)),
                publish("app", wanted(null, 8080, A, 80)));

        assertThat(plan.answers()).extracting(PortPlanner.Answer::mappings).containsExactly(
                List.of(mapping(null, 8080, A, 80, "app")), List.of(mapping(null, 8080, A, 80, "app")));
        assertThat(plan.add()).hasSize(1);
    }

    @Test
    void aPortUnpublishedEarlierInTheBatchIsFreeForTheNextOwner() {
        PortMapping old = mapping(null, 8080, A, 80, "old");
        store.put(old);

        PortPlanner.BatchPlan plan = plan(unpublish("old", A, wanted(null, 8080, A, 80)),
                publish("new", wanted(null, 8080, B, 80)));

        assertThat(plan.answers()).extracting(PortPlanner.Answer::refused).containsOnlyNulls();
        assertThat(plan.delete()).containsExactly(old);
        assertThat(plan.add()).extracting(PortMapping::owner).containsExactly("new");
    }

    @Test
    void aPublishUnpublishedLaterInTheBatchCancelsOutButStillCommits() {
        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 8080, A, 80)),
                unpublish("app", A, wanted(null, 8080, A, 80)));

        assertThat(plan.add()).isEmpty();
        assertThat(plan.delete()).isEmpty();
        assertThat(plan.changes()).as("the guarded commit proves the read was current").isTrue();
    }

    @Test
    void aRefusedRequestChangesNothingAndFailsNoOther() {
        store.put(mapping(null, 8080, A, 80, "held"));

        PortPlanner.BatchPlan plan = plan(publish("app", wanted(null, 9090, B, 90), wanted(null, 8080, B, 80)),
                publish("other", wanted(null, 7070, B, 70)));

        assertThat(refused(plan, 0)).isInstanceOf(ConflictException.class);
        assertThat(plan.add()).extracting(PortMapping::hostPort).containsExactly(7070);
    }

    @Test
    void aPortASocketOfTheHostHoldsIsRefusedUnlessNotChecked() {
        List<BoundSocket> held = List.of(new BoundSocket(false, TCP, InetAddress.ofLiteral("0.0.0.0"), 8080, false, 0, 4711));
        CommitRequest checked = publish("app", wanted(null, 8080, A, 80));
        CommitRequest unchecked = new CommitRequest.Publish("n1", List.of(wanted(null, 8080, A, 80)), "app", false);

        assertThat(refused(PortPlanner.plan(store.begin(), List.of(checked), List.of(), held, "host1"), 0))
                .isInstanceOf(ConflictException.class).hasMessageContaining("*:8080/tcp is in use on the host in host1")
                .hasMessageContaining("0.0.0.0:8080/tcp");
        assertThat(PortPlanner.plan(store.begin(), List.of(unchecked), List.of(), held, "host1").add()).hasSize(1);
        // A port the owner publishes already is gatun's, not the socket's: moving it is not refused.
        store.put(mapping(null, 8080, A, 80, "app"));
        assertThat(PortPlanner.plan(store.begin(), List.of(publish("app", wanted(null, 8080, B, 80))), List.of(), held,
                "host1").answers().getFirst().refused()).isNull();
    }

    /**
     * The planner runs under the publisher's lock: a port a process holds is refused naming the
     * socket only, and the process (a scan of every process's descriptors) is named after, by the
     * caller. Here the process is this JVM, holding a socket it opened.
     */
    @Test
    void aHeldPortsProcessIsNamedAfterThePlanNotInIt() throws IOException {
        try (ServerSocketChannel listening = ServerSocketChannel.open()) {
            listening.bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 0));
            long inode = aSocketInodeOfThisProcess();
            List<BoundSocket> held = List.of(new BoundSocket(false, TCP, InetAddress.ofLiteral("0.0.0.0"), 8080, false, 0, inode));
            RuntimeException refused = refused(PortPlanner.plan(store.begin(), List.of(publish("app", wanted(null, 8080, A, 80))),
                    List.of(), held, "host1"), 0);

            String named = "(pid " + ProcessHandle.current().pid() + ")";
            assertThat(refused).isInstanceOf(HostPortInUseException.class)
                    .hasMessageContaining("a socket (inode " + inode + ", uid 0)").hasMessageNotContaining(named);
            assertThat(((HostPortInUseException) refused).namingItsProcess())
                    .hasMessageContaining(named + " listens on 0.0.0.0:8080/tcp")
                    .hasMessageContaining("*:8080/tcp is in use on the host in host1");
        }
    }

    private static long aSocketInodeOfThisProcess() throws IOException {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        return Long.parseLong(target.substring("socket:[".length(), target.length() - 1));
                    }
                } catch (IOException e) {
                    // the stream's own descriptor, gone once read
                }
            }
        }
        throw new AssertionError("this process holds no socket");
    }

    @Test
    void anUnpublishNamesWhatIsWrong() {
        store.put(mapping(null, 8080, A, 80, "app"));

        assertThat(refused(plan(unpublish("other", A, wanted(null, 8080, A, 80))), 0))
                .isInstanceOf(ConflictException.class).hasMessageContaining("held by owner app, not by other");
        assertThat(refused(plan(unpublish("app", B, wanted(null, 8080, B, 80))), 0))
                .isInstanceOf(NotFoundException.class).hasMessageContaining("published to 10.88.0.2:80, not to 10.88.0.3:80");
        assertThat(refused(plan(unpublish("app", A, wanted(null, 9090, A, 80))), 0))
                .isInstanceOf(NotFoundException.class).hasMessageContaining("no port *:9090/tcp");
    }

    /** Two unpublishes of one mapping in a batch: the second finds it gone, so it is deleted once. */
    @Test
    void anUnpublishOfAllThatMatchSkipsWhatTheBatchRemovedBefore() {
        store.put(mapping(null, 8080, A, 80, "app"));
        store.put(mapping(null, 8081, A, 80, "app"));

        PortPlanner.BatchPlan plan = plan(unpublish("app", A, wanted(null, 8080, A, 80)),
                new CommitRequest.Unpublish("n1", new Publisher.Selection(A, null, "app",
                        m -> m.containerIp().equals(A) && m.owner().equals("app"))));

        assertThat(plan.answers().get(0).mappings()).extracting(PortMapping::hostPort).containsExactly(8080);
        assertThat(plan.answers().get(1).mappings()).extracting(PortMapping::hostPort).containsExactly(8081);
        assertThat(plan.delete()).extracting(PortMapping::hostPort).containsExactlyInAnyOrder(8080, 8081);
    }

    private PortPlanner.BatchPlan plan(CommitRequest... batch) {
        return plan(List.of(), batch);
    }

    private PortPlanner.BatchPlan plan(List<InetAddress> local, CommitRequest... batch) {
        return PortPlanner.plan(store.begin(), List.of(batch), local, List.of(), "host1");
    }

    private static RuntimeException refused(PortPlanner.BatchPlan plan, int request) {
        return plan.answers().get(request).refused();
    }

    static CommitRequest publish(String owner, Publisher.Wanted... mappings) {
        return new CommitRequest.Publish("n1", List.of(mappings), owner, true);
    }

    static CommitRequest unpublish(String owner, InetAddress container, Publisher.Wanted... keys) {
        return new CommitRequest.Unpublish("n1", new Publisher.Selection(container, List.of(keys), owner, null));
    }

    static Publisher.Wanted wanted(InetAddress hostIp, int hostPort, InetAddress container, int containerPort) {
        return new Publisher.Wanted(Protocol.TCP, hostIp, hostPort, container, containerPort);
    }

    static PortMapping mapping(InetAddress hostIp, int hostPort, InetAddress container, int containerPort, String owner) {
        return new PortMapping(null, Protocol.TCP, hostIp, hostPort, container, containerPort, owner);
    }
}
