package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;

import java.time.Duration;
import java.util.List;

/**
 * The backend-driver contract an engine calls: container networks, their endpoints, and
 * published ports with Docker's {@code -p} semantics. Implementations keep all state in the
 * kernel, so a fresh instance (in any process) sees what another made; {@link SelfHealingDriver}
 * also keeps in memory what it puts back after someone else removes it. What gatun's own driver
 * offers past this contract is split by role (see {@link GatunDriver}), none of it a default,
 * so that no decorator of it can leave a hole.
 *
 * <p>Errors: {@link dev.gatun.InvalidInputException} for bad input (nothing is sent), its
 * subclass {@link NotFoundException} for a network or endpoint that does not exist,
 * {@link ConflictException} for collisions, {@link dev.gatun.PrivilegeException} for missing
 * privilege, other {@link dev.gatun.GatunException}s when the kernel or a tool fails.
 */
public interface NetworkDriver extends AutoCloseable {

    /** The namespace that plays the host. */
    NetworkNamespace host();

    /** Creates a network: a bridge with a fixed MAC, gateway addresses, forwarding, and its firewall entries. */
    Network createNetwork(NetworkSpec spec);

    /** Deletes a network; with endpoints attached it refuses unless {@code force}, which detaches them first. */
    void deleteNetwork(String name, boolean force);

    List<Network> networks();

    /** The network with this name; a {@link NotFoundException} naming it if there is none. */
    default Network network(String name) {
        return networks().stream().filter(n -> n.name().equals(name)).findFirst()
                .orElseThrow(() -> new NotFoundException("network " + name + " does not exist"));
    }

    /**
     * Attaches a container: a veth pair, the container end addressed, up, with a default route.
     * Without a container namespace in the spec, the container end stays in the host namespace,
     * down and unaddressed, for an engine that moves and configures it itself.
     */
    Endpoint attach(EndpointSpec spec);

    /** Detaches every endpoint of {@code owner} on the network, and removes the ports published to them. */
    void detachOwner(String network, String owner);

    /** Detaches the container's interface and removes the ports published to its addresses. */
    void detach(String network, NetworkNamespace container, String ifname);

    List<Endpoint> endpoints(String network);

    /**
     * Publishes {@code request}'s ports to its container address in one transaction. A host
     * port held by another owner, or by a socket of the host, is a {@link ConflictException}
     * naming the holder, and nothing changes; publishing the same mapping again by its owner
     * changes nothing. Returns the mappings now in place.
     */
    default List<PortMapping> publish(PortRequest request) {
        return publish(request, HostPortCheck.CHECK);
    }

    /** As {@link #publish(PortRequest)}, asking the host's sockets first only with CHECK. */
    List<PortMapping> publish(PortRequest request, HostPortCheck check);

    /**
     * {@link #publish} to each address of one container (its IPv4 and its IPv6 one) as one
     * request: every port or none, in one transaction. An address without ports is left out;
     * none with ports is refused, and so is more than one without an owner. Where the packet
     * filter has transactions, the network's own entries are added in the same one where they
     * are missing (a network made by {@link ContainerSetup#createNetworkForPublish}, or one a
     * crash left without them), also when the ports are refused for a conflict or a held port;
     * a failure before the commit (bad input, the kernel's) leaves them to
     * {@link ContainerSetup#completeNetwork}. The mappings now in place, in the order asked.
     */
    List<PortMapping> publishAll(PortsByAddress request, HostPortCheck check);

    /**
     * Publishes as {@link #publish(PortRequest, HostPortCheck)}, except that a host key another
     * owner holds exactly (the same family, address, protocol and port) is taken from it in the
     * same transaction: new connections reach the request's container address from the commit
     * on, while established ones keep their old target until they close (conntrack keeps
     * them). The old owner's UDP conntrack entries of those ports are deleted, so that the next
     * datagram reaches the new target, unless {@code keepUdpFlows}. A key that only overlaps
     * another owner's (every address against one address) stays a {@link ConflictException}, and
     * a container address that no endpoint of the network has is refused
     * ({@link NotFoundException}); in both cases nothing changes.
     */
    Replacement replace(PortRequest request, HostPortCheck check, boolean keepUdpFlows);

    /**
     * Removes the owner's mappings to the request's container address: those of its ports, or
     * all of them when it lists none. A listed port held by another owner is refused.
     */
    List<PortMapping> unpublish(PortRequest request);

    /**
     * Waits until conntrack holds no established TCP connection that came in through
     * {@code mappings} (as an unpublish or a replace returned them, each to its old target), or
     * until {@code timeout}; returns how many remain (0: drained). UDP and SCTP mappings have no
     * established state and are not waited for.
     */
    int drain(List<PortMapping> mappings, Duration timeout);

    /**
     * Tells {@code listener} of every publish and unpublish this driver commits from now on
     * (null: nobody), replacing the listener before.
     */
    void listen(PortListener listener);

    /** The published ports of one network, or of all when {@code network} is null. */
    List<PortMapping> published(String network);

    /**
     * {@link #published} with the packets and bytes each mapping was sent, for networks made
     * with counters (a driver that keeps none gives every mapping null traffic).
     */
    List<PortTraffic> traffic(String network);

    @Override
    void close();
}
