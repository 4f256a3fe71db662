package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

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
            publisher.publish(List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, A, 53)), "app");

            // Moving the port flushes the old mapping's UDP entries, which fails here.
            List<PortMapping> moved = publisher.publish(List.of(new Publisher.Wanted(Protocol.UDP, null, 5353, B, 53)), "app");

            assertThat(moved).extracting(PortMapping::containerIp).containsExactly(B);
            assertThat(firewall.mappings()).extracting(PortMapping::containerIp).containsExactly(B);
        }
    }
}
