package dev.gatun.driver.bridge;

import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.Rollback;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Ports published to addresses on none of gatun's networks (a CNI chain's containers, those of
 * a bridge gatun does not manage): checks each address is outside its networks, and keeps the
 * masquerade of localhost and hairpin connections to each such container ({@link OutsideTarget})
 * while a mapping leads there.
 */
final class OutsidePublishing {

    private final Publisher publisher;
    private final Supplier<List<Network>> networks;
    /**
     * The subnets of the bridges adopted: their entries masquerade localhost and hairpin
     * connections as a network's do, so a container there needs no {@link OutsideTarget}.
     */
    private final Supplier<List<Prefix>> adoptedSubnets;
    /** Makes gatun's table, under the driver's topology lock, for a port published while no network exists. */
    private final Runnable ensureTable;
    /** Localhost and hairpin connections to the containers outside gatun's networks. */
    private final OutsideMasquerade outside;

    OutsidePublishing(NetworkNamespace host, Firewall firewall, Publisher publisher, Supplier<List<Network>> networks,
                      Supplier<List<Prefix>> adoptedSubnets, Runnable ensureTable) {
        this.publisher = publisher;
        this.networks = networks;
        this.adoptedSubnets = adoptedSubnets;
        this.ensureTable = ensureTable;
        this.outside = new OutsideMasquerade(host, firewall);
    }

    List<PortMapping> publish(String label, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check) {
        checkOutside(containerIp, networks.get());
        String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
        if (ports.isEmpty()) {
            throw new InvalidInputException("publish to " + InetText.of(containerIp) + ": no ports given");
        }
        List<Publisher.Wanted> wanted = Publisher.Wanted.of(containerIp, ports);
        ensureTable.run();
        Rollback rollback = new Rollback();
        addTargets(List.of(containerIp), rollback);
        try {
            return publisher.publish(label, wanted, who, check);
        } catch (RuntimeException e) {
            throw rollback.undo(e);
        }
    }

    List<PortMapping> unpublish(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        checkOutside(containerIp, networks.get());
        List<PortMapping> removed = publisher.unpublish(label, Publisher.Selection.of(containerIp, ports, owner));
        outside.removeIfUnused(containerIp);
        return removed;
    }

    /**
     * {@link #unpublish} and {@link #publish} of each address of {@code change}, all
     * checked first and then committed in one batch (see {@link Publisher#together}). The
     * {@link OutsideTarget}s they need are added before it and taken out after it where unused.
     */
    List<OutsideChange.Outcome> change(OutsideChange change) {
        String who = OwnerNames.check(change.owner());
        List<Network> own = networks.get();
        Map<InetAddress, Publisher.Selection> unpublish = new LinkedHashMap<>();
        change.unpublish().forEach((ip, ports) -> {
            checkOutside(ip, own);
            unpublish.put(ip, Publisher.Selection.of(ip, ports, who));
        });
        Map<InetAddress, List<Publisher.Wanted>> publish = new LinkedHashMap<>();
        change.publish().forEach((ip, ports) -> {
            checkOutside(ip, own);
            publish.put(ip, Publisher.Wanted.of(ip, ports));
        });
        List<CommitRequest> requests = new ArrayList<>();
        unpublish.values().forEach(sel -> requests.add(Publisher.unpublishing(change.label(), sel)));
        publish.forEach((ip, wanted) -> requests.add(publisher.publishing(change.label(), wanted, who, change.check())));
        if (requests.isEmpty()) {
            return List.of();
        }
        Rollback rollback = new Rollback();
        List<PortPlanner.Answer> answers;
        if (!publish.isEmpty()) {
            ensureTable.run();
        }
        try {
            addTargets(publish.keySet(), rollback);
            answers = publisher.together(requests);
        } catch (RuntimeException e) {
            throw rollback.undo(e);
        }
        List<OutsideChange.Outcome> out = new ArrayList<>(answers.size());
        Set<InetAddress> mayBeUnused = new LinkedHashSet<>(unpublish.keySet());
        int i = 0;
        for (InetAddress ip : unpublish.keySet()) {
            PortPlanner.Answer a = answers.get(i++);
            out.add(new OutsideChange.Outcome(ip, false, a.mappings(), a.refused()));
        }
        for (InetAddress ip : publish.keySet()) {
            PortPlanner.Answer a = answers.get(i++);
            out.add(new OutsideChange.Outcome(ip, true, a.mappings(), a.refused()));
            if (a.refused() != null) {
                mayBeUnused.add(ip);
            }
        }
        mayBeUnused.forEach(outside::removeIfUnused);
        return out;
    }

    /**
     * Adds the {@link OutsideTarget} of each of {@code ips} that needs one (on no adopted
     * bridge) and has none; each added is taken out again if {@code rollback} undoes.
     */
    private void addTargets(Collection<InetAddress> ips, Rollback rollback) {
        List<Prefix> adopted = adoptedSubnets.get();
        for (InetAddress ip : ips) {
            if (adopted.stream().noneMatch(p -> p.contains(ip))) {
                outside.add(ip).ifPresent(t -> rollback.onFailure(() -> outside.removeIfUnused(ip)));
            }
        }
    }

    /**
     * Puts back the {@link OutsideTarget} of each container outside gatun's networks that a
     * mapping of {@code wanted} goes to, where someone removed it; one line for each.
     */
    List<String> restore(List<PortMapping> wanted) {
        List<Prefix> subnets = new ArrayList<>(networks.get().stream().flatMap(n -> n.subnets().stream()).toList());
        subnets.addAll(adoptedSubnets.get());
        Set<InetAddress> ips = new LinkedHashSet<>();
        for (PortMapping m : wanted) {
            if (subnets.stream().noneMatch(p -> p.contains(m.containerIp()))) {
                ips.add(m.containerIp());
            }
        }
        if (ips.isEmpty()) {
            return List.of();
        }
        return outside.addMissing(ips).stream()
                .map(t -> "the masquerade of localhost and hairpin connections to " + t.describe()).toList();
    }

    private static void checkOutside(InetAddress ip, List<Network> own) {
        if (ip == null) {
            throw new InvalidInputException("the container address is missing");
        }
        for (Network n : own) {
            if (n.subnets().stream().anyMatch(p -> p.contains(ip))) {
                throw new InvalidInputException("container address " + InetText.of(ip) + " is on network " + n.name()
                        + " of gatun's; publish there");
            }
        }
    }
}
