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
import java.util.stream.Collectors;

/**
 * Waits for the established TCP connections through mappings that no longer take new ones (an
 * unpublish, a replace) to end: each waiting drain looks every {@link #POLL}, so its wait ends
 * within about twice that of the last one closing. A look reads conntrack's table at most once
 * per {@link #POLL} for all drains waiting at once, not once per drain: a walk of the table is
 * milliseconds on a busy host, and 70 drains each walking it every 20 ms took both cores of a
 * serve. Only TCP has an established state; UDP and SCTP mappings are not waited for.
 */
final class FlowDrain implements AutoCloseable {

    /** How often a drain looks, and how old a reading of the table it takes. */
    static final Duration POLL = Duration.ofMillis(20);

    /** One reading of a family's established, destination-NATed flows, and when it began. */
    private record Reading(long startedNanos, List<Conntrack.NattedFlow> flows) {}

    private final NetworkNamespace host;
    private final ReentrantLock lock = new ReentrantLock();
    /** Opened at the first drain, under {@link #lock}. */
    private Conntrack conntrack;
    /** The latest readings, IPv4 then IPv6, under {@link #lock}. */
    private final Reading[] latest = new Reading[2];
    private boolean closed;

    FlowDrain(NetworkNamespace host) {
        this.host = host;
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
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            int left = 0;
            for (Map.Entry<InetAddress, List<Conntrack.NattedPort>> e : byTarget.entrySet()) {
                for (Conntrack.NattedFlow f : flows(e.getKey() instanceof Inet6Address)) {
                    if (f.isThrough(e.getValue(), e.getKey())) {
                        left++;
                    }
                }
            }
            if (left == 0 || System.nanoTime() - deadline >= 0) {
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
    private List<Conntrack.NattedFlow> flows(boolean ipv6) {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the driver is closed");
            }
            int i = ipv6 ? 1 : 0;
            long now = System.nanoTime();
            Reading r = latest[i];
            if (r == null || now - r.startedNanos() >= POLL.toNanos()) {
                if (conntrack == null) {
                    conntrack = Conntrack.open(host);
                }
                r = new Reading(now, conntrack.establishedNatted(ipv6));
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
            if (conntrack != null) {
                conntrack.close();
                conntrack = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
