package dev.gatun.driver.bridge;

import dev.gatun.driver.HostPortCheck;

import java.util.List;
import java.util.Set;

/** What one caller asks of the {@link Publisher}: mappings to publish, or a selection to unpublish. */
sealed interface CommitRequest permits CommitRequest.Publish, CommitRequest.Unpublish {

    /** The network whose name the request's mappings carry. */
    String network();

    /**
     * {@code checkHost}: whether the host's sockets are asked if they hold a port (see
     * {@link HostPortCheck}); {@code engineSockets}: the inodes of sockets found, before the
     * request was queued, to be the engine's reservation of its ports, which are not refused;
     * {@code networkEntries}: the entries of the mappings' network, to go in with them (null:
     * none), in the batch's transaction even if every mapping is refused (see
     * {@link Firewall#entriesWithMappings}).
     */
    record Publish(String network, List<Publisher.Wanted> mappings, String owner, boolean checkHost,
                   Set<Long> engineSockets, Replace replace, BridgeRules networkEntries) implements CommitRequest {
        Publish(String network, List<Publisher.Wanted> mappings, String owner, boolean checkHost) {
            this(network, mappings, owner, checkHost, Set.of(), Replace.NO, null);
        }

        Publish(String network, List<Publisher.Wanted> mappings, String owner, boolean checkHost,
                Set<Long> engineSockets, Replace replace) {
            this(network, mappings, owner, checkHost, engineSockets, replace, null);
        }
    }

    /**
     * Whether a publish takes a key another owner holds: {@code NO} refuses it (a conflict); the
     * others replace that owner's mapping, and either delete the UDP conntrack entries it made
     * (the next datagram reaches the new target) or keep them until they expire.
     */
    enum Replace {
        NO, DELETING_UDP_FLOWS, KEEPING_UDP_FLOWS
    }

    record Unpublish(String network, Publisher.Selection selection) implements CommitRequest {}
}
