package dev.gatun.driver;

import java.util.List;

/**
 * Ports published to containers on none of the driver's networks, whose network another
 * program made (a CNI chain in which gatun follows the {@code bridge} plugin, dockerd's
 * bridges): only the port entries, nothing for their bridges.
 */
public interface OutsidePorts {

    /**
     * Publishes {@code request}'s ports; its network is only the name the returned mappings
     * carry (the kernel keeps only the owner). Otherwise as {@link NetworkDriver#publish}:
     * {@code check} says whether the host's sockets are asked ({@link HostPortCheck#SKIP} for a
     * CNI chain, whose runtime holds the ports itself) and whose sockets are the engine's
     * reservation. An address on one of the driver's networks is refused (publish there).
     */
    List<PortMapping> publishOutside(PortRequest request, HostPortCheck check);

    /** As {@link NetworkDriver#unpublish}, for mappings made by {@link #publishOutside}. */
    List<PortMapping> unpublishOutside(PortRequest request);

    /**
     * {@link #unpublishOutside} and {@link #publishOutside} for each address of {@code change},
     * the unpublishes first (a key moving to another address is free for it), committed in one
     * transaction: a request refused (a port held, a key gone) changes nothing of its own and is
     * said in its outcome, the others go in. Every address and port is checked before anything
     * is sent. One outcome per address and part, unpublishes first, each in the change's order.
     * A failure that is no one request's (a target of {@link #publishOutside} that cannot be
     * added, a read or commit the kernel fails) is thrown instead.
     */
    List<OutsideChange.Outcome> changeOutside(OutsideChange change);

    /** The published ports whose container address is on none of the driver's networks; their network is null. */
    List<PortMapping> publishedOutside();
}
