package dev.gatun.cli.dockerd;

import dev.gatun.driver.ConflictException;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;

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
 * theirs: each container's ports published to its address (as ports outside gatun's own
 * networks, owned by {@code docker:ID}), added before what is no longer wanted is removed, so a
 * port that stays never stops answering. Mappings of other owners are never touched.
 */
final class PortsReconciler {

    /**
     * The processes whose socket on a port is dockerd's own reservation of what it recorded:
     * dockerd itself (Docker 23 and later bind the port when the userland proxy is off) and
     * docker-proxy. Any other holder is refused.
     */
    static final HostPortCheck DOCKERD_HOLDS = HostPortCheck.exceptHeldBy("dockerd", "docker-proxy");

    private final GatunDriver driver;
    private final Consumer<String> log;

    PortsReconciler(GatunDriver driver, Consumer<String> log) {
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

    /** Makes the container's mappings those of {@code wanted}, given what it holds now; how many changed. */
    int apply(ContainerPorts wanted, List<PortMapping> held) {
        int changed = add(wanted, held, "");
        Set<Key> want = new HashSet<>();
        wanted.ports().forEach((target, specs) -> specs.forEach(p -> want.add(Key.of(target, p))));
        for (PortMapping m : held) {
            if (!want.contains(Key.of(m))) {
                driver.unpublishOutside(label(wanted), m.containerIp(), List.of(Key.of(m).spec()), m.owner());
                log.accept("unpublished " + m.describe() + " of container " + shortId(m.owner()));
                changed++;
            }
        }
        return changed;
    }

    /**
     * Publishes what of {@code wanted} the container does not hold yet, and takes nothing away;
     * how many it added. {@code when} ends each line logged (" at its network connect").
     */
    int add(ContainerPorts wanted, List<PortMapping> held, String when) {
        int added = 0;
        for (Map.Entry<InetAddress, List<PortSpec>> target : wanted.ports().entrySet()) {
            List<PortSpec> missing = new ArrayList<>();
            for (PortSpec p : target.getValue()) {
                Key k = Key.of(target.getKey(), p);
                if (held.stream().noneMatch(m -> Key.of(m).equals(k))) {
                    missing.add(p);
                }
            }
            if (!missing.isEmpty()) {
                added += publish(wanted, target.getKey(), missing, when);
            }
        }
        return added;
    }

    /**
     * Publishes {@code missing} in one transaction; when a port of them is held by a process other
     * than dockerd's own, one by one instead, so that only the held ones are refused, each
     * reported (dockerd without its userland proxy records a binding over any process's port).
     */
    private int publish(ContainerPorts wanted, InetAddress target, List<PortSpec> missing, String when) {
        try {
            for (PortMapping m : driver.publishOutside(label(wanted), target, missing, wanted.owner(), DOCKERD_HOLDS)) {
                log.accept("published " + m.describe() + " for container " + shortId(wanted.owner()) + when);
            }
            return missing.size();
        } catch (ConflictException e) {
            if (missing.size() == 1) {
                log.accept("not published for container " + shortId(wanted.owner()) + ": " + e.getMessage());
                return 0;
            }
        }
        int done = 0;
        for (PortSpec p : missing) {
            done += publish(wanted, target, List.of(p), when);
        }
        return done;
    }

    /** Removes every mapping of {@code owner}; how many went. */
    int remove(String owner, List<PortMapping> held) {
        Set<InetAddress> targets = new HashSet<>();
        held.forEach(m -> targets.add(m.containerIp()));
        int removed = 0;
        for (InetAddress ip : targets) {
            List<PortMapping> gone = driver.unpublishOutside("docker", ip, List.of(), owner);
            gone.forEach(m -> log.accept("unpublished " + m.describe() + " of container " + shortId(owner)));
            removed += gone.size();
        }
        return removed;
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
