package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.InetText;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Ports published to containers on gatun's networks: checks each request (the address is on
 * the network, its owner, the families of the ports) and turns it into the {@link Publisher}'s
 * terms; completes a network made for its first container's ports where a publish finds no
 * table yet. Ports to containers outside the networks are {@link OutsidePublishing}'s; the
 * listings, {@link PortListings}'.
 */
final class PublishedPorts {

    private final Firewall firewall;
    private final Publisher publisher;
    /** Makes gatun's table, under the driver's topology lock, for a port published while no network exists. */
    private final Runnable ensureTable;
    /**
     * {@link #complete} of the network named, under the driver's topology lock and looked up
     * again there: one removed meanwhile is not found, rather than completed after its removal.
     */
    private final Consumer<String> completeNetwork;

    PublishedPorts(Firewall firewall, Publisher publisher, Runnable ensureTable, Consumer<String> completeNetwork) {
        this.firewall = firewall;
        this.publisher = publisher;
        this.ensureTable = ensureTable;
        this.completeNetwork = completeNetwork;
    }

    List<PortMapping> publish(Network n, InetAddress containerIp, List<PortSpec> ports, String owner,
                              HostPortCheck check) {
        String who = checkedOwner(n, containerIp, ports, owner, "publish to ");
        List<Publisher.Wanted> wanted = Publisher.Wanted.of(containerIp, ports);
        try {
            return publisher.publish(n.name(), wanted, who, check);
        } catch (NetlinkException e) {
            completeForNoTable(n, e);
            return publisher.publish(n.name(), wanted, who, check);
        }
    }

    /**
     * Adds the network's entries, and gatun's table first if it is not there: for a network made
     * for its first container's ports ({@code createNetworkForPublish}) that did not get them.
     * Changes nothing where they are in place; nothing where the firewall makes them at creation.
     * The caller holds the driver's topology lock.
     */
    void complete(Network n) {
        if (!firewall.entriesWithMappings()) {
            return;
        }
        try {
            // Entries all in place make a transaction that changes nothing: no generation, no notification.
            firewall.network(BridgeRules.ofOwn(n), true);
        } catch (NetlinkException e) {
            if (!e.isNotFound()) {
                throw e;
            }
            ensureTable.run();
            firewall.network(BridgeRules.ofOwn(n), true);
        }
    }

    /**
     * After a publish that carries no entries of its network failed: if it found no table
     * (ENOENT: a network made for its first container's ports, on a host without gatun's table,
     * before those came), completes the network, for the caller to publish once more; else
     * throws {@code failure}. A network removed since the publish looked it up is not found.
     */
    private void completeForNoTable(Network n, NetlinkException failure) {
        if (!failure.isNotFound() || !firewall.entriesWithMappings()) {
            throw failure;
        }
        completeNetwork.accept(n.name());
    }

    /**
     * {@link #publish} to each address of {@code ports}, as one request, with the network's own
     * entries where the firewall can carry them (see {@link dev.gatun.driver.NetworkDriver#publishAll}).
     */
    List<PortMapping> publishAll(Network n, Map<InetAddress, List<PortSpec>> ports, String owner, HostPortCheck check) {
        List<Publisher.Wanted> wanted = new ArrayList<>();
        String who = null;
        int addresses = 0;
        for (Map.Entry<InetAddress, List<PortSpec>> e : ports.entrySet()) {
            if (e.getValue().isEmpty()) {
                continue;
            }
            checkContainer(n, e.getKey());
            // Without an owner, the address names it, as a publish to that address alone would.
            who = who != null ? who : OwnerNames.check(PortMapping.ownerOr(owner, e.getKey()));
            wanted.addAll(Publisher.Wanted.of(e.getKey(), e.getValue()));
            addresses++;
        }
        if (wanted.isEmpty()) {
            throw new InvalidInputException("publish on network " + n.name() + ": no ports given");
        }
        if (owner == null && addresses > 1) {
            // One request has one owner: each address would name its own, and an unpublish by address find them.
            throw new InvalidInputException("publish on network " + n.name() + " to " + addresses
                    + " addresses needs an owner (without one, each address's mappings are its own: publish to each)");
        }
        if (firewall.entriesWithMappings()) {
            // The network's own entries ride along: its first container's are one transaction (see createNetworkForPublish).
            return publisher.publishWithEntries(n.name(), wanted, who, check, BridgeRules.ofOwn(n));
        }
        return publisher.publish(n.name(), wanted, who, check);
    }

    Replacement replace(Network n, InetAddress containerIp, List<PortSpec> ports, String owner, HostPortCheck check,
                        boolean keepUdpFlows) {
        String who = checkedOwner(n, containerIp, ports, owner, "replace ports of ");
        List<Publisher.Wanted> wanted = Publisher.Wanted.of(containerIp, ports);
        try {
            return publisher.replace(n.name(), wanted, who, check, keepUdpFlows);
        } catch (NetlinkException e) {
            completeForNoTable(n, e);
            return publisher.replace(n.name(), wanted, who, check, keepUdpFlows);
        }
    }

    /** The owner a publish or replace to {@code containerIp} goes under, once its target and ports are checked. */
    private String checkedOwner(Network n, InetAddress containerIp, List<PortSpec> ports, String owner,
                                String operation) {
        checkContainer(n, containerIp);
        String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
        if (ports.isEmpty()) {
            throw new InvalidInputException(operation + InetText.of(containerIp) + ": no ports given");
        }
        return who;
    }

    /** Without {@code ports}: every mapping of {@code owner} to {@code containerIp}. */
    List<PortMapping> unpublish(Network n, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkContainer(n, containerIp);
        return publisher.unpublish(n.name(), Publisher.Selection.of(containerIp, ports, owner));
    }

    /** Removes every mapping to one of {@code addresses}, whoever owns it (an endpoint is going). */
    void unpublishAll(String network, Collection<InetAddress> addresses) {
        Set<InetAddress> ips = new HashSet<>(addresses);
        publisher.unpublish(network, Publisher.Selection.toAny(ips::contains));
    }

    /** Removes every mapping into {@code n}'s subnets (the network is going). */
    void unpublishAll(Network n) {
        publisher.unpublish(n.name(), Publisher.Selection.toAny(ip -> n.subnets().stream().anyMatch(p -> p.contains(ip))));
    }

    private static void checkContainer(Network n, InetAddress ip) {
        if (ip == null) {
            throw new InvalidInputException("the container address is missing");
        }
        for (Prefix p : n.subnets()) {
            if (p.contains(ip)) {
                return;
            }
        }
        throw new InvalidInputException("container address " + InetText.of(ip) + " is outside the subnets "
                + n.subnets() + " of network " + n.name());
    }
}
