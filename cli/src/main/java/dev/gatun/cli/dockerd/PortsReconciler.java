package dev.gatun.cli.dockerd;

import dev.gatun.driver.ConflictException;
import dev.gatun.driver.OutsidePorts;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.PortRequest;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Makes gatun's table hold exactly what dockerd recorded for its containers, and nothing else of
 * theirs: each container's ports published to its addresses (as ports outside gatun's own
 * networks, owned by {@code docker:ID}), what it gains and what it loses in one transaction per
 * event. Mappings of other owners are never touched.
 */
final class PortsReconciler {

    /**
     * The processes whose socket on a port is dockerd's own reservation of what it recorded:
     * dockerd itself (Docker 23 and later bind the port when the userland proxy is off) and
     * docker-proxy. Any other holder is refused.
     */
    static final HostPortCheck DOCKERD_HOLDS = HostPortCheck.exceptHeldBy("dockerd", "docker-proxy");

    private final OutsidePorts driver;
    private final Consumer<String> log;

    PortsReconciler(OutsidePorts driver, Consumer<String> log) {
        this.driver = driver;
        this.log = log;
    }

    /** The mappings of Docker's containers now in the kernel, by owner. */
    Map<String, List<PortMapping>> current() {
        Map<String, List<PortMapping>> byOwner = new LinkedHashMap<>();
        for (PortMapping m : driver.publishedOutside()) {
            if (ContainerPorts.isDockerOwner(m.owner())) {
                byOwner.computeIfAbsent(m.owner(), k -> new ArrayList<>()).add(m);
            }
        }
        return byOwner;
    }

    /**
     * Makes the container's mappings those of {@code wanted}, given what it holds now, in one
     * transaction (what is no longer wanted goes in the same one, so a port that stays never
     * stops answering; but see {@link #change} for a port another process holds); how many changed.
     */
    int apply(ContainerPorts wanted, List<PortMapping> held) {
        Set<Key> want = new HashSet<>();
        wanted.ports().forEach((target, specs) -> specs.forEach(p -> want.add(Key.of(target, p))));
        Map<InetAddress, List<PortSpec>> stale = new LinkedHashMap<>();
        for (PortMapping m : held) {
            if (!want.contains(Key.of(m))) {
                stale.computeIfAbsent(m.containerIp(), k -> new ArrayList<>()).add(Key.of(m).spec());
            }
        }
        return change(label(wanted), wanted.owner(), stale, missing(wanted, held), "");
    }

    /**
     * Publishes what of {@code wanted} the container does not hold yet, and takes nothing away;
     * how many it added. {@code when} ends each line logged (" at its network connect").
     */
    int add(ContainerPorts wanted, List<PortMapping> held, String when) {
        return change(label(wanted), wanted.owner(), Map.of(), missing(wanted, held), when);
    }

    /** Removes every mapping of {@code owner}; how many went. */
    int remove(String owner, List<PortMapping> held) {
        Map<InetAddress, List<PortSpec>> all = new LinkedHashMap<>();
        held.forEach(m -> all.put(m.containerIp(), List.of()));
        return change("docker", owner, all, Map.of(), "");
    }

    /** Per container address, the ports of {@code wanted} that {@code held} lacks. */
    private static Map<InetAddress, List<PortSpec>> missing(ContainerPorts wanted, List<PortMapping> held) {
        Set<Key> have = new HashSet<>();
        held.forEach(m -> have.add(Key.of(m)));
        Map<InetAddress, List<PortSpec>> out = new LinkedHashMap<>();
        wanted.ports().forEach((target, specs) -> {
            List<PortSpec> lacking = specs.stream().filter(p -> !have.contains(Key.of(target, p))).toList();
            if (!lacking.isEmpty()) {
                out.put(target, lacking);
            }
        });
        return out;
    }

    /**
     * One event's change of one container, in one transaction. A publish refused because a port
     * of it is held by a process other than dockerd's own is sent again port by port, so that only
     * the held ones are refused, each reported (dockerd without its userland proxy records a
     * binding over any process's port).
     */
    private int change(String label, String owner, Map<InetAddress, List<PortSpec>> unpublish,
                       Map<InetAddress, List<PortSpec>> publish, String when) {
        OutsideChange c = new OutsideChange(label, owner, unpublish, publish, DOCKERD_HOLDS);
        if (c.isEmpty()) {
            return 0;
        }
        int changed = 0;
        for (OutsideChange.Outcome o : driver.changeOutside(c)) {
            if (o.refused() == null) {
                o.mappings().forEach(m -> log.accept(o.published()
                        ? "published " + m.describe() + " for container " + shortId(owner) + when
                        : "unpublished " + m.describe() + " of container " + shortId(owner)));
                changed += o.mappings().size();
            } else if (o.published() && o.refused() instanceof ConflictException && publish.get(o.containerIp()).size() > 1) {
                for (PortSpec p : publish.get(o.containerIp())) {
                    changed += publishAlone(label, owner, o.containerIp(), p, when);
                }
            } else {
                log.accept((o.published() ? "not published" : "not unpublished") + " for container " + shortId(owner)
                        + ": " + o.refused().getMessage());
            }
        }
        return changed;
    }

    private int publishAlone(String label, String owner, InetAddress target, PortSpec p, String when) {
        try {
            for (PortMapping m : driver.publishOutside(new PortRequest(label, target, List.of(p), owner), DOCKERD_HOLDS)) {
                log.accept("published " + m.describe() + " for container " + shortId(owner) + when);
            }
            return 1;
        } catch (ConflictException e) {
            log.accept("not published for container " + shortId(owner) + ": " + e.getMessage());
            return 0;
        }
    }

    private static String label(ContainerPorts c) {
        return c.network() == null ? "docker" : c.network();
    }

    static String shortId(String owner) {
        String id = owner.substring(ContainerPorts.OWNER_PREFIX.length());
        return id.substring(0, Math.min(12, id.length()));
    }

    /** One mapping, as the kernel keys it and a publish asks for it. */
    private record Key(InetAddress hostIp, int hostPort, InetAddress containerIp, int containerPort, Protocol protocol) {
        static Key of(InetAddress target, PortSpec p) {
            return new Key(p.hostIp(), p.hostStart(), target, p.containerStart(), p.protocol());
        }

        static Key of(PortMapping m) {
            return new Key(m.hostIp(), m.hostPort(), m.containerIp(), m.containerPort(), m.protocol());
        }

        PortSpec spec() {
            return new PortSpec(hostIp, hostPort, hostPort, containerPort, containerPort, protocol);
        }
    }
}
