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
import java.util.stream.Collectors;

/**
 * Waits for the established TCP connections through mappings that no longer take new ones (an
 * unpublish, a replace) to end: conntrack is asked every {@link #POLL}, so the wait ends within
 * that of the last one closing. Only TCP has an established state; UDP and SCTP mappings are
 * not waited for.
 */
final class FlowDrain {

    /** How often conntrack is read while connections remain: one table walk each time. */
    static final Duration POLL = Duration.ofMillis(20);

    private FlowDrain() {}

    /** How many connections remain at the timeout (0: none remained). */
    static int await(NetworkNamespace host, List<PortMapping> mappings, Duration timeout) {
        Map<InetAddress, List<Conntrack.NattedPort>> byTarget = mappings.stream()
                .filter(m -> m.protocol() == Protocol.TCP)
                .collect(Collectors.groupingBy(PortMapping::containerIp, LinkedHashMap::new,
                        Collectors.mapping(m -> new Conntrack.NattedPort(m.containerIp() instanceof Inet6Address,
                                m.protocol().number(), m.hostIp(), m.hostPort()), Collectors.toList())));
        if (byTarget.isEmpty()) {
            return 0;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Conntrack conntrack = Conntrack.open(host)) {
            while (true) {
                int left = 0;
                for (Map.Entry<InetAddress, List<Conntrack.NattedPort>> e : byTarget.entrySet()) {
                    left += conntrack.established(e.getValue(), e.getKey());
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
    }
}
