package dev.gatun.driver.bridge;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Route;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.rtnl.Sysctls;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Localhost and hairpin connections to a published port of a container outside gatun's
 * networks (a CNI chain's, after {@code bridge} or {@code ptp}), made to work as they do on
 * gatun's bridges: the host interface the container is reached by (the route to it, as
 * {@code portmap} finds it) becomes an {@link OutsideTarget} of the packet filter, and
 * {@code route_localnet} is turned on there for 127.0.0.1. Each is kept while a mapping goes
 * to the address, and removed with its last one; route_localnet is turned off again with the
 * interface's last target when gatun turned it on.
 */
final class OutsideMasquerade {

    private final NetworkNamespace host;
    private final Firewall firewall;

    OutsideMasquerade(NetworkNamespace host, Firewall firewall) {
        this.host = host;
        this.firewall = firewall;
    }

    /**
     * Adds the target of {@code containerIp} unless it is there; returns the one added, empty
     * when it was there or no route of the host leads to the address (then nothing can reach it).
     */
    synchronized Optional<OutsideTarget> add(InetAddress containerIp) {
        return add(containerIp, firewall.outsideTargets());
    }

    /** {@link #add} for each of {@code containerIps} whose target is not there (someone removed it); the ones added. */
    synchronized List<OutsideTarget> addMissing(Collection<InetAddress> containerIps) {
        List<OutsideTarget> now = new ArrayList<>(firewall.outsideTargets());
        List<OutsideTarget> added = new ArrayList<>();
        for (InetAddress ip : containerIps) {
            add(ip, now).ifPresent(t -> {
                added.add(t);
                now.add(t);
            });
        }
        return added;
    }

    private Optional<OutsideTarget> add(InetAddress containerIp, List<OutsideTarget> now) {
        if (now.stream().anyMatch(t -> t.containerIp().equals(containerIp))) {
            return Optional.empty();
        }
        Optional<OutsideTarget> found = route(containerIp);
        if (found.isEmpty()) {
            return found;
        }
        OutsideTarget routed = found.get();
        OutsideTarget t = routed;
        if (containerIp instanceof Inet4Address) {
            String ifname = routed.hostIfname();
            Sysctls sysctls = new Sysctls(host);
            // A later target of the interface inherits the mark, so the last one knows to turn it off.
            boolean byGatun = "0".equals(sysctls.read("ipv4/conf/" + ifname + "/route_localnet"))
                    || now.stream().anyMatch(o -> o.hostIfname().equals(ifname) && o.localnetByGatun());
            if (byGatun) {
                sysctls.setRouteLocalnet(ifname, true);
            }
            t = new OutsideTarget(ifname, containerIp, routed.route(), byGatun);
        }
        try {
            firewall.outside(t, true);
        } catch (RuntimeException e) {
            if (t.localnetByGatun() && now.stream().noneMatch(o -> o.hostIfname().equals(routed.hostIfname()))) {
                new Sysctls(host).setRouteLocalnet(routed.hostIfname(), false);
            }
            throw e;
        }
        return Optional.of(t);
    }

    /** Removes the targets of {@code containerIp} when no mapping goes to it any more. */
    synchronized void removeIfUnused(InetAddress containerIp) {
        // The targets first: they are few, the mappings may be thousands, and most addresses have none.
        List<OutsideTarget> targets = firewall.outsideTargets().stream().filter(t -> t.containerIp().equals(containerIp)).toList();
        if (targets.isEmpty() || firewall.mappings().stream().anyMatch(m -> m.containerIp().equals(containerIp))) {
            return;
        }
        targets.forEach(this::remove);
    }

    /**
     * Removes {@code t}, turning route_localnet off with the interface's last target if gatun
     * turned it on, unless the interface is a bridge gatun adopted since: its containers need it
     * on, so the mark passes to the bridge's alias, and its release turns it off.
     */
    synchronized void remove(OutsideTarget t) {
        firewall.outside(t, false);
        boolean last = firewall.outsideTargets().stream().noneMatch(o -> o.hostIfname().equals(t.hostIfname()));
        if (last && t.localnetByGatun()) {
            try (Rtnetlink rtnl = Rtnetlink.open(host)) {
                Optional<Link> link = rtnl.find(t.hostIfname());
                if (link.isEmpty()) {
                    return; // the other plugin removed its interface already
                }
                // Targets were added for containers on adopted bridges before adopting turned route_localnet on.
                Optional<AdoptedAlias> adopted = AliasFields.readable(link.get(), a -> AdoptedAlias.decode(t.hostIfname(), a));
                if (adopted.isPresent()) {
                    if (!adopted.get().localnetByGatun()) {
                        rtnl.setAlias(t.hostIfname(), new AdoptedAlias(adopted.get().bridge(), true).encode());
                    }
                    return;
                }
            }
            new Sysctls(host).setRouteLocalnet(t.hostIfname(), false);
        }
    }

    /** The most specific route of the host's main table to {@code ip} that goes out of an interface. */
    private Optional<OutsideTarget> route(InetAddress ip) {
        try (Rtnetlink rtnl = Rtnetlink.open(host)) {
            Route best = null;
            for (Route r : rtnl.routes()) {
                if (r.destination() != null && r.outputIndex() != 0 && r.gateway() == null
                        && (r.destination().address() instanceof Inet4Address) == (ip instanceof Inet4Address)
                        && r.destination().contains(ip)
                        && (best == null || r.destination().length() > best.destination().length())) {
                    best = r;
                }
            }
            if (best == null) {
                return Optional.empty();
            }
            Optional<Link> link = rtnl.find(best.outputIndex());
            Prefix to = best.destination().network();
            return link.map(l -> new OutsideTarget(l.name(), ip, to, false));
        }
    }
}
