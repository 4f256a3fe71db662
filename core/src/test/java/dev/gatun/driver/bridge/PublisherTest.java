package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(FreshNamespaces.class)
class PublisherTest {

    private static final InetAddress A = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress B = InetAddress.ofLiteral("10.88.0.3");

    /** Once the maps changed, a failure to clean conntrack up afterwards does not report the change as failed. */
    @Test
    void aConntrackFailureAfterTheCommitStillReturnsTheChange(NetworkNamespace host) {
        NftablesFirewall firewall = new NftablesFirewall(host);
        firewall.ensure(List.of());
        // A real conntrack socket, closed before use: every delete on it fails.
        try (Publisher publisher = new Publisher(host, firewall, List::of, ns -> {
            Conntrack closed = Conntrack.open(ns);
            closed.close();
            return closed;
        })) {
            publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, A, 53)), "app");

            // Moving the port flushes the old mapping's UDP entries, which fails here.
            List<PortMapping> moved = publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, B, 53)),
                    "app");

            assertThat(moved).extracting(PortMapping::containerIp).containsExactly(B);
            assertThat(firewall.mappings()).extracting(PortMapping::containerIp).containsExactly(B);
        }
    }

    /**
     * A request still queued when the driver is closed fails as closed: it neither commits nor
     * reopens the sockets that close() just closed (nobody would close them again).
     */
    @Test
    void aRequestQueuedAtCloseFailsAndOpensNothing(NetworkNamespace host) throws Exception {
        NftablesFirewall firewall = new NftablesFirewall(host);
        firewall.ensure(List.of());
        CountDownLatch opening = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger opened = new AtomicInteger();
        Publisher publisher = new Publisher(host, firewall, List::of, ns -> {
            opened.incrementAndGet();
            opening.countDown();
            Bounded.await(release, "the test's release of the conntrack opening");
            return Conntrack.open(ns);
        });
        // The first publish holds the lock while it opens its sockets.
        FutureTask<List<PortMapping>> first = new FutureTask<>(() ->
                publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.TCP, null, 8080, A, 80)), "first"));
        Thread.ofPlatform().start(first);
        assertThat(opening.await(10, TimeUnit.SECONDS)).isTrue();
        // The second finds the lock taken, queues and parks.
        FutureTask<List<PortMapping>> second = new FutureTask<>(() ->
                publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.TCP, null, 8081, B, 80)), "second"));
        Thread secondThread = Thread.ofPlatform().start(second);
        awaitState(secondThread, Thread.State.TIMED_WAITING);
        // close() marks the driver closed, then waits for the lock.
        FutureTask<Void> closing = new FutureTask<>(publisher::close, null);
        Thread closingThread = Thread.ofPlatform().start(closing);
        awaitState(closingThread, Thread.State.WAITING);

        release.countDown();

        assertThat(first.get(10, TimeUnit.SECONDS)).extracting(PortMapping::hostPort).containsExactly(8080);
        assertThatThrownBy(() -> second.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        closing.get(10, TimeUnit.SECONDS);
        assertThat(opened).hasValue(1);
        assertThat(firewall.mappings()).extracting(PortMapping::hostPort).containsExactly(8080);
    }

    /**
     * The listener hears what was committed, named, and not a refused request; when it throws,
     * the caller still gets the result of the commit that was made.
     */
    @Test
    void theListenerHearsCommitsOnlyAndItsFailureFailsNoCaller(NetworkNamespace host) {
        NftablesFirewall firewall = new NftablesFirewall(host);
        firewall.ensure(List.of());
        List<String> heard = new ArrayList<>();
        try (Publisher publisher = new Publisher(host, firewall, List::of)) {
            publisher.listen(new HeardCommits(heard) {
                @Override
                public void unpublished(List<PortMapping> mappings) {
                    super.unpublished(mappings);
                    throw new IllegalStateException("a listener that fails");
                }
            });
            publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.TCP, null, 8080, A, 80)), "app");
            assertThatThrownBy(() -> publisher.publish("n1", List.of(new Publisher.Wanted(Protocol.TCP, null, 8080, B, 80)),
                    "other")).isInstanceOf(ConflictException.class);

            List<PortMapping> removed = publisher.unpublish("n1", new Publisher.Selection(A, null, "app", m -> true));

            assertThat(removed).extracting(PortMapping::hostPort).containsExactly(8080);
            assertThat(firewall.mappings()).isEmpty();
            assertThat(heard).containsExactly("+n1 8080 app", "-n1 8080 app");
        }
    }

    private static void awaitState(Thread t, Thread.State state) throws InterruptedException {
        for (int i = 0; i < 1000 && t.getState() != state; i++) {
            Thread.sleep(10);
        }
        assertThat(t.getState()).as("state of %s", t).isEqualTo(state);
    }
}
