package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How drains read conntrack's table, against a stand-in table and clock: every drain looking
 * while a reading serves ({@link FlowDrain#POLL}) shares it; a drain counts only the flows
 * through its own ports to its own container.
 */
class FlowDrainTest {

    private static final InetAddress A = InetAddress.ofLiteral("10.88.0.2");
    private static final InetAddress B = InetAddress.ofLiteral("10.88.0.3");
    private static final InetAddress HOST = InetAddress.ofLiteral("192.0.2.1");

    private long now = 1_000_000_000L;
    private final List<Boolean> reads = new ArrayList<>();
    private List<Conntrack.NattedFlow> flows = List.of();

    private FlowDrain drain() {
        return new FlowDrain(() -> new FlowDrain.Table() {
            @Override
            public List<Conntrack.NattedFlow> read(boolean ipv6) {
                synchronized (FlowDrainTest.this) {
                    reads.add(ipv6);
                    return flows;
                }
            }

            @Override
            public void close() {
            }
        }, () -> {
            synchronized (FlowDrainTest.this) {
                return now;
            }
        });
    }

    @Test
    void drainsLookingWhileAReadingServesShareIt() throws InterruptedException {
        FlowDrain d = drain();
        CountDownLatch done = new CountDownLatch(10);
        for (int i = 0; i < 10; i++) {
            Thread.ofVirtual().start(() -> {
                d.flows(false);
                done.countDown();
            });
        }
        done.await();
        assertThat(reads).as("ten drains, the clock still").containsExactly(false);

        advance(FlowDrain.POLL.toNanos() - 1);
        d.flows(false);
        assertThat(reads).hasSize(1);
        advance(1);
        d.flows(false);
        d.flows(true);
        assertThat(reads).as("a reading a poll old, and the other family's own").containsExactly(false, false, true);
    }

    @Test
    void aDrainCountsOnlyTheFlowsThroughItsPortsToItsContainer() {
        FlowDrain d = drain();
        flows = List.of(new Conntrack.NattedFlow(HOST.getAddress(), 8080, A.getAddress()),
                new Conntrack.NattedFlow(HOST.getAddress(), 8080, A.getAddress()),
                new Conntrack.NattedFlow(HOST.getAddress(), 8080, B.getAddress()),
                new Conntrack.NattedFlow(HOST.getAddress(), 9090, A.getAddress()));
        List<PortMapping> mine = List.of(new PortMapping("n1", Protocol.TCP, null, 8080, A, 80, "a"),
                new PortMapping("n1", Protocol.UDP, null, 9090, A, 90, "a"));

        assertThat(d.await(mine, Duration.ZERO)).as("two to A on 8080; B's and UDP 9090's not").isEqualTo(2);
        flows = List.of(flows.get(2));
        advance(FlowDrain.POLL.toNanos());
        assertThat(d.await(mine, Duration.ofSeconds(5))).isZero();
    }

    private synchronized void advance(long nanos) {
        now += nanos;
    }
}
