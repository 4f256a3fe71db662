package dev.gatun.cli.dockerd;

import dev.gatun.cli.events.EventCause;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.OutsidePorts;
import dev.gatun.driver.BridgeAdoption;
import dev.gatun.driver.PortMapping;
import dev.gatun.rtnl.Prefix;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * {@code gatun serve --docker}: follows the dockerd on a unix socket and keeps, in gatun's table,
 * what dockerd's own iptables rules would have held: every network of Docker's {@code bridge}
 * driver as an adopted bridge (masquerade, forwarding, isolation, internal) and the published
 * ports of every running container on them, as dockerd recorded them. At every (re)connect it opens the event stream first, then reconciles the whole
 * picture against dockerd's lists (so an event that comes meanwhile is held, not lost), then
 * applies each event as it comes: a start or a network (dis)connect reads the container again, a
 * die or destroy removes its ports. dockerd down or the stream broken: what is in the kernel
 * stays, and it connects again after a backoff of half a second doubling to 30 s.
 */
public final class DockerFollower implements AutoCloseable {

    private static final long FIRST_BACKOFF_MILLIS = 500;
    private static final long MAX_BACKOFF_MILLIS = 30_000;

    private final Path socket;
    private final BridgeAdoption bridges;
    private final PortsReconciler ports;
    private final Consumer<String> log;
    private final Thread thread;
    /** Each network's driver by id: only {@code bridge} networks are Docker's own to program. */
    private final Map<String, String> networkDrivers = new HashMap<>();
    /** Docker's bridges adopted, by interface name (touched on the follower's thread only). */
    private final Map<String, AdoptedBridge> adopted = new HashMap<>();
    private volatile boolean stopping;
    private volatile DockerEngine.Events stream;
    /** Counted down when the first connect has reconciled, or failed to. */
    private final CountDownLatch firstPass = new CountDownLatch(1);

    private DockerFollower(Path socket, BridgeAdoption bridges, OutsidePorts ports, Consumer<String> log) {
        this.socket = socket;
        this.bridges = bridges;
        this.ports = new PortsReconciler(ports, log);
        this.log = log;
        this.thread = Thread.ofPlatform().name("gatun-dockerd").daemon().unstarted(this::run);
    }

    /** Follows the dockerd on {@code socket} (see {@link DockerEngine#socketOf}) with {@code driver}, on a thread of its own. */
    public static <D extends BridgeAdoption & OutsidePorts> DockerFollower start(Path socket, D driver,
                                                                                  Consumer<String> log) {
        DockerFollower f = new DockerFollower(socket, driver, driver, log);
        f.thread.start();
        return f;
    }

    /**
     * Waits until the first connect has put the kernel in line with dockerd's lists, or found
     * dockerd unreachable, for at most {@code timeout}: a serve says it is ready after this, so
     * that what it reports ready is dockerd's picture, not the one from before it started.
     * Whether the first pass is over.
     */
    public boolean awaitFirstPass(Duration timeout) throws InterruptedException {
        return firstPass.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The socket of {@code dockerHost} ({@code unix:///PATH}), checked before anything starts. */
    public static Path socketOf(String dockerHost) {
        return DockerEngine.socketOf(dockerHost);
    }

    private void run() {
        long backoff = FIRST_BACKOFF_MILLIS;
        while (!stopping) {
            try (DockerEngine engine = DockerEngine.on(socket); DockerEngine.Events events = engine.events()) {
                stream = events;
                int changed = reconcileAll(engine);
                log.accept("following dockerd on " + socket + ": " + changed + " mapping(s) put in line with its containers");
                firstPass.countDown();
                backoff = FIRST_BACKOFF_MILLIS;
                for (JsonNode e = events.next(); e != null && !stopping; e = events.next()) {
                    apply(engine, e);
                }
                if (!stopping) {
                    log.accept("dockerd on " + socket + " ended its event stream; connecting again");
                }
            } catch (RuntimeException e) {
                if (stopping) {
                    return;
                }
                log.accept("dockerd on " + socket + ": " + e.getMessage() + "; the kernel keeps what it has, trying again in "
                        + backoff + " ms");
                firstPass.countDown();
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException i) {
                    return;
                }
                backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
            }
        }
    }

    /**
     * Every bridge network of dockerd adopted (and none that is gone), every running container's
     * ports as dockerd has them, and none of containers that are gone; how many changed.
     */
    int reconcileAll(DockerEngine engine) {
        int changed = reconcileNetworks(engine);
        Map<String, List<PortMapping>> held = ports.current();
        Set<String> live = new HashSet<>();
        List<ContainerPorts> wanted = new ArrayList<>();
        for (String id : engine.runningContainers()) {
            JsonNode inspect = engine.inspect(id);
            if (inspect != null) {
                ContainerPorts c = ours(engine, ContainerPorts.of(inspect));
                live.add(c.owner());
                wanted.add(c);
            }
        }
        // The gone first: a port a container that is gone held may be a live one's now.
        for (Map.Entry<String, List<PortMapping>> h : held.entrySet()) {
            if (!live.contains(h.getKey())) {
                changed += alone(h.getKey(), "removing", () -> ports.remove(h.getKey(), h.getValue()));
            }
        }
        for (ContainerPorts c : wanted) {
            changed += alone(c.owner(), "publishing", () -> ports.apply(c, held.getOrDefault(c.owner(), List.of())));
        }
        return changed;
    }

    /**
     * Adopts the bridge of every network of dockerd's bridge driver, and lets go of those that
     * are gone; how many changed. A bridge dockerd deleted has no alias left to read, so what
     * was adopted is also kept here, to take its entries out.
     */
    private int reconcileNetworks(DockerEngine engine) {
        JsonNode list = engine.get("/networks");
        List<AdoptedBridge> wanted = list == null ? List.of() : DockerNetworks.bridges(list);
        List<AdoptedBridge> held = bridges.adoptedBridges();
        held.stream().filter(DockerNetworks::isDockers).forEach(b -> adopted.put(b.bridge(), b));
        int changed = 0;
        for (AdoptedBridge b : List.copyOf(adopted.values())) {
            if (wanted.stream().noneMatch(w -> w.bridge().equals(b.bridge()))) {
                changed += alone(b.name(), "letting go of network", () -> {
                    bridges.releaseBridge(b);
                    adopted.remove(b.bridge());
                    log.accept("let go of bridge " + b.bridge() + " (" + b.name() + "): its network is gone");
                    return 1;
                });
            }
        }
        for (AdoptedBridge b : wanted) {
            if (!held.contains(b)) {
                changed += alone(b.name(), "adopting network", () -> {
                    bridges.adoptBridge(b);
                    adopted.put(b.bridge(), b);
                    log.accept("adopted bridge " + b.bridge() + " (" + b.name() + ", " + b.subnet4()
                            + (b.subnet6() == null ? "" : ", " + b.subnet6()) + (b.icc() ? "" : ", no icc") + (b.internal() ? ", internal" : "")
                            + (b.masquerade() ? "" : ", not masqueraded") + ")");
                    return 1;
                });
            }
        }
        return changed;
    }

    /** One container's change; a failure of it (a port another owner holds) is said, and the others go on. */
    private int alone(String owner, String what, IntSupplier change) {
        try {
            return EventCause.as("dockerd: " + what + " container " + PortsReconciler.shortId(owner), change::getAsInt);
        } catch (DockerEngineException e) {
            throw e;
        } catch (RuntimeException e) {
            log.accept(what + " the ports of container " + PortsReconciler.shortId(owner) + ": " + e.getMessage());
            return 0;
        }
    }

    private void apply(DockerEngine engine, JsonNode event) {
        String type = event.path("Type").asText();
        String action = event.path("Action").asText();
        if (type.equals("network") && (action.equals("create") || action.equals("destroy"))) {
            reconcileNetworks(engine);
            return;
        }
        String id = type.equals("network") ? event.path("Actor").path("Attributes").path("container").asText("")
                : event.path("Actor").path("ID").asText("");
        if (id.isEmpty()) {
            return;
        }
        if (type.equals("container") && action.equals("create")) {
            // Nothing to publish yet, and its inspect would wait for the start that follows.
            return;
        }
        String owner = ContainerPorts.ownerOf(id);
        List<PortMapping> held = ports.current().getOrDefault(owner, List.of());
        if (type.equals("container") && (action.equals("die") || action.equals("destroy"))) {
            alone(owner, "removing", () -> ports.remove(owner, held));
            return;
        }
        int early = type.equals("network") && action.equals("connect")
                ? publishEarly(engine, event.path("Actor").path("ID").asText(""), id, held) : 0;
        // While dockerd starts the container, its inspect waits for the start to finish.
        JsonNode inspect = engine.inspect(id);
        List<PortMapping> now = early == 0 ? held : ports.current().getOrDefault(owner, List.of());
        alone(owner, type + " " + action + ": publishing", () -> inspect == null ? ports.remove(owner, now)
                : ports.apply(ours(engine, ContainerPorts.of(inspect)), now));
    }

    /**
     * At the connect of a container to the network it was created on: the ports it asked for by
     * number, to the address the network gave it, published at once. dockerd has reserved them
     * by then but goes on starting the container (a quarter of a second more here), so they are
     * in before {@code docker run} returns, as with Docker's own rules. What dockerd records at
     * the start (ports it chose, bindings on another network) is put in line right after.
     */
    private int publishEarly(DockerEngine engine, String networkId, String id, List<PortMapping> held) {
        if (networkId.isEmpty()) {
            return 0;
        }
        Optional<JsonNode> hostConfig = engine.createdHostConfig(id);
        if (hostConfig.isEmpty() || hostConfig.get().path("PortBindings").isEmpty()) {
            return 0;
        }
        JsonNode network = engine.get("/networks/" + networkId);
        if (network == null || !network.path("Driver").asText("").equals("bridge")) {
            return 0;
        }
        networkDrivers.put(networkId, "bridge");
        String name = network.path("Name").asText("");
        String mode = hostConfig.get().path("NetworkMode").asText("");
        boolean itsOwn = mode.equals(name) || mode.equals(networkId) || (mode.equals("default") && name.equals("bridge"));
        String address = network.path("Containers").path(id).path("IPv4Address").asText("");
        String address6 = network.path("Containers").path(id).path("IPv6Address").asText("");
        if (!itsOwn || address.isEmpty()) {
            return 0;
        }
        // Read inside alone(): a binding it cannot read is said, and the event stream goes on.
        return alone(ContainerPorts.ownerOf(id), "network connect: publishing early", () -> ports.add(
                ContainerPorts.requested(id, hostConfig.get(), name, networkId, Prefix.parse(address).address(),
                        address6.isEmpty() ? null : Prefix.parse(address6).address()), held, " at its network connect"));
    }

    /** The container's ports if its network is one of Docker's bridge networks; none otherwise (a plugin's). */
    private ContainerPorts ours(DockerEngine engine, ContainerPorts c) {
        if (c.networkId() == null) {
            return c;
        }
        String driver = networkDrivers.computeIfAbsent(c.networkId(), id -> {
            JsonNode n = engine.get("/networks/" + id);
            return n == null ? "" : n.path("Driver").asText("");
        });
        return driver.equals("bridge") ? c : new ContainerPorts(c.owner(), c.network(), c.networkId(), Map.of());
    }

    @Override
    public void close() {
        stopping = true;
        DockerEngine.Events s = stream;
        if (s != null) {
            s.close();
        }
        thread.interrupt();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
