package dev.gatun.rtnl;

import dev.gatun.Rollback;
import dev.gatun.netns.NetworkNamespace;

import java.net.InetAddress;
import java.util.List;

/**
 * Puts a container on a bridge in one operation: a veth pair whose peer is created directly in
 * the container's namespace under its final name, the host end on the bridge with hairpin on,
 * the container end addressed, up, with a default route through the gateway. rtnetlink is not
 * transactional, so if a step fails the completed ones are undone: nothing half-made stays.
 */
public final class ContainerInterface {

    /**
     * What to make. {@code addresses} and {@code gateways} are per address family; gateways may
     * be empty. A null {@code container} leaves the container end in the host namespace, down
     * and unaddressed, for an engine that moves and configures it itself (Docker does).
     */
    public record Spec(String hostName, MacAddress hostMac, String bridge, boolean isolated, NetworkNamespace container,
                       String name, MacAddress mac, List<Prefix> addresses, List<InetAddress> gateways, Integer mtu) {}

    private ContainerInterface() {}

    /** Makes the interface; on failure nothing of it is left in either namespace. */
    public static Link create(Rtnetlink host, Spec spec) {
        InterfaceNames.check(spec.hostName());
        InterfaceNames.check(spec.name());
        Rollback rollback = new Rollback();
        try {
            Link hostEnd = host.createVeth(spec.hostName(), spec.hostMac(), spec.name(), spec.mac(), spec.container(),
                    spec.mtu());
            // Deleting the host end deletes the pair, in both namespaces.
            rollback.onFailure(() -> host.delete(spec.hostName()));
            if (spec.bridge() != null) {
                host.setMaster(spec.hostName(), spec.bridge());
                host.setBridgePortFlags(spec.hostName(), true, spec.isolated());
            }
            host.setUp(spec.hostName(), true);
            if (spec.container() == null) {
                return host.link(hostEnd.name());
            }
            try (Rtnetlink inside = Rtnetlink.open(spec.container())) {
                for (Prefix p : spec.addresses()) {
                    inside.addAddress(spec.name(), p);
                }
                inside.setUp(spec.name(), true);
                inside.setUp("lo", true);
                for (InetAddress gw : spec.gateways()) {
                    inside.addDefaultRoute(gw, spec.name());
                }
            }
            return host.link(hostEnd.name());
        } catch (RuntimeException e) {
            throw rollback.undo(e);
        }
    }
}
