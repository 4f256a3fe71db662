package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Waits for the established TCP connections through mappings that no longer take new ones (an
 * unpublish, a replace) to end. Each waiting drain looks every {@link #POLL} at a reading of
 * conntrack's table at most {@link #POLL} old, which all drains waiting at once share: a walk of
 * the table is milliseconds on a busy host (20,000 entries: 10 ms with the kernel sending the
 * NATed ones alone, 52 ms decoding them all), and 70 drains each walking it every 20 ms took both
 * cores of a serve; shared, the walks take one thread at most. A drain ends within about 40 ms
 * of the last connection closing. Only TCP has an established state; UDP and SCTP mappings are
 * not waited for.
 */
final class FlowDrain implements AutoCloseable {

    /** How often a drain looks, and how old a reading of the table it takes at most. */
    static final Duration POLL = Duration.ofMillis(20);

    /** Reads one family's established, destination-NATed flows (true: IPv6). */
    interface Table extends AutoCloseable {
        List<Conntrack.NattedFlow> read(boolean ipv6);

        @Override
        void close();
    }

    /** One reading of a family's flows, and until when it serves: {@link #POLL} from its start. */
    private record Reading(long freshUntilNanos, List<Conntrack.NattedFlow> flows) {}

    private final Supplier<Table> open;
    private final LongSupplier clock;
    private final ReentrantLock lock = new ReentrantLock();
    /** Opened at the first drain, under {@link #lock}. */
    private Table table;
    /** The latest readings, IPv4 then IPv6, under {@link #lock}. */
    private final Reading[] latest = new Reading[2];
    private boolean closed;

    FlowDrain(NetworkNamespace host) {
        this(() -> {
            Conntrack c = Conntrack.open(host);
            return new Table() {
                @Override
                public List<Conntrack.NattedFlow> read(boolean ipv6) {
                    return c.establishedNatted(ipv6);
                }

                @Override
                public void close() {
                    c.close();
                }
            };
        }, System::nanoTime);
    }

    /** {@code open}: the table, opened at the first look; {@code clock}: nanoseconds, as System.nanoTime. */
    FlowDrain(Supplier<Table> open, LongSupplier clock) {
        this.open = open;
        this.clock = clock;
    }

    /** How many connections remain at the timeout (0: none remained). */
    int await(List<PortMapping> mappings, Duration timeout) {
        Map<InetAddress, List<Conntrack.NattedPort>> byTarget = mappings.stream()
                .filter(m -> m.protocol() == Protocol.TCP)
                .collect(Collectors.groupingBy(PortMapping::containerIp, LinkedHashMap::new,
                        Collectors.mapping(m -> new Conntrack.NattedPort(m.containerIp() instanceof Inet6Address,
                                m.protocol().number(), m.hostIp(), m.hostPort()), Collectors.toList())));
        if (byTarget.isEmpty()) {
            return 0;
        }
        long deadline = clock.getAsLong() + timeout.toNanos();
        while (true) {
            int left = 0;
            for (Map.Entry<InetAddress, List<Conntrack.NattedPort>> e : byTarget.entrySet()) {
                for (Conntrack.NattedFlow f : flows(e.getKey() instanceof Inet6Address)) {
                    if (f.isThrough(e.getValue(), e.getKey())) {
                        left++;
                    }
                }
            }
            if (left == 0 || clock.getAsLong() - deadline >= 0) {
                return left;
            }
            try {
                Thread.sleep(POLL);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return left;
            }
        }
    }

    /** The family's flows as read at most {@link #POLL} ago, reading the table again when older. */
    List<Conntrack.NattedFlow> flows(boolean ipv6) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the driver is closed");
            }
            int i = ipv6 ? 1 : 0;
            Reading r = latest[i];
            long now = clock.getAsLong();
            if (r == null || now - r.freshUntilNanos() >= 0) {
                if (table == null) {
                    table = open.get();
                }
                r = new Reading(now + POLL.toNanos(), table.read(ipv6));
                latest[i] = r;
            }
            return r.flows();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            latest[0] = null;
            latest[1] = null;
            if (table != null) {
                table.close();
                table = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
