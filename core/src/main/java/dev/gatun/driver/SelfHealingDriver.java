package dev.gatun.driver;

import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;

import java.time.Duration;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A driver for a long-running process: it keeps the mappings published through it in memory
 * (starting from what the kernel holds) and puts back whatever someone else removes of its
 * packet-filter state, such as an {@code nft flush ruleset} or a firewall reload. Its
 * {@link Healer} hears the kernel's nftables notifications, so a repair follows a removal within
 * milliseconds; a check every few seconds backs them up. This class keeps the lock, the ledger
 * of wanted mappings and the timing: concurrent publishes and unpublishes reach the inner driver
 * together (it commits them in shared transactions); repairs and changes to networks and
 * endpoints run alone. Mappings that other processes add or remove while it runs are theirs:
 * change them through this driver instead.
 */
public final class SelfHealingDriver implements GatunDriver {

    private final GatunDriver inner;
    /**
     * Read: publish and unpublish. Write: repairs and topology. A repair never mistakes this
     * process's own unpublish for damage: holding the write lock, it runs while no publish or
     * unpublish is under way, and each of those recorded its commit in {@code wanted} (see
     * {@link Recorder}) before its caller got the result and let go of the read lock. So
     * {@code wanted} is what this process's commits left in the kernel, and whatever of it is
     * missing someone else removed. Its own commits do not even wake the healer: the kernel
     * names the committing thread of each transaction ({@link dev.gatun.nft.RulesetEvent#byThisProcess}).
     */
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    /** Guarded by itself: written by whichever thread commits, read by the repair and {@link #wanted()}. */
    private final WantedMappings wanted = new WantedMappings();
    private volatile PortListener listener;
    private final Healer healer;

    private SelfHealingDriver(GatunDriver inner, Repairs repairs, Consumer<String> log,
                              int eventQueueBytes, long backstopMillis) {
        this.inner = inner;
        inner.listen(new Recorder());
        inner.allPublished().forEach(wanted::put);
        this.healer = new Healer(inner.host(), repairs, this::wanted, this::alone, log, eventQueueBytes, backstopMillis);
    }

    /**
     * Wraps {@code inner}, reads its mappings from the kernel, repairs once, and starts
     * watching. {@code log} receives one line per thing put back and per failed repair.
     */
    public static SelfHealingDriver start(HealableDriver inner, Consumer<String> log) {
        return start(inner, inner, log, null, 0, HealSchedule.BACKSTOP_MILLIS);
    }

    /** {@link #start(HealableDriver, java.util.function.Consumer)}, telling {@code heal} of the first repair too. */
    public static SelfHealingDriver start(HealableDriver inner, Consumer<String> log, HealListener heal) {
        return start(inner, inner, log, heal, 0, HealSchedule.BACKSTOP_MILLIS);
    }

    /**
     * Wraps {@code inner}, whose state {@code repairs} puts back (another object than the driver
     * only where a measurement needs repairs of its own).
     */
    public static SelfHealingDriver start(GatunDriver inner, Repairs repairs, Consumer<String> log) {
        return start(inner, repairs, log, null, 0, HealSchedule.BACKSTOP_MILLIS);
    }

    /** With the monitor's kernel queue this small (0: the default), for tests that overrun it. */
    static SelfHealingDriver start(HealableDriver inner, Consumer<String> log, int eventQueueBytes) {
        return start(inner, inner, log, null, eventQueueBytes, HealSchedule.BACKSTOP_MILLIS);
    }

    /** With a backstop this often, for tests that watch it. */
    static SelfHealingDriver start(HealableDriver inner, Consumer<String> log, int eventQueueBytes,
                                   long backstopMillis) {
        return start(inner, inner, log, null, eventQueueBytes, backstopMillis);
    }

    private static SelfHealingDriver start(GatunDriver inner, Repairs repairs, Consumer<String> log,
                                           HealListener heal, int eventQueueBytes, long backstopMillis) {
        SelfHealingDriver d = new SelfHealingDriver(inner, repairs, log, eventQueueBytes, backstopMillis);
        d.healer.listen(heal);
        d.healer.repairAll();
        return d;
    }

    /** How many times the nftables notifications overran so far, each followed by a repair that read everything. */
    long overruns() {
        return healer.overruns();
    }

    /** The mappings this driver keeps in place. */
    public List<PortMapping> wanted() {
        synchronized (wanted) {
            return wanted.toList();
        }
    }

    /** Tells {@code listener} of each outside change of gatun's table this driver sees and of each repair. */
    public void listenToHealing(HealListener listener) {
        healer.listen(listener);
    }

    /**
     * Keeps {@code wanted} as this process's commits leave the kernel. Told on the committing
     * thread in commit order, so of two racing calls on one host key the one the kernel took
     * last is the one kept; updating it after each call returned could keep the other.
     */
    private final class Recorder implements PortListener {
        @Override
        public void published(List<PortMapping> mappings) {
            synchronized (wanted) {
                mappings.forEach(wanted::put);
            }
            PortListener l = listener;
            if (l != null) {
                l.published(mappings);
            }
        }

        @Override
        public void unpublished(List<PortMapping> mappings) {
            synchronized (wanted) {
                mappings.forEach(wanted::remove);
            }
            PortListener l = listener;
            if (l != null) {
                l.unpublished(mappings);
            }
        }
    }

    @Override
    public NetworkNamespace host() {
        return inner.host();
    }

    @Override
    public Network createNetwork(NetworkSpec spec) {
        return alone(() -> inner.createNetwork(spec));
    }

    @Override
    public Network createNetworkForPublish(NetworkSpec spec) {
        return alone(() -> inner.createNetworkForPublish(spec));
    }

    @Override
    public void completeNetwork(String name) {
        alone(() -> inner.completeNetwork(name));
    }

    @Override
    public void adoptBridge(AdoptedBridge bridge) {
        alone(() -> inner.adoptBridge(bridge));
    }

    @Override
    public void releaseBridge(AdoptedBridge bridge) {
        alone(() -> inner.releaseBridge(bridge));
    }

    @Override
    public List<AdoptedBridge> adoptedBridges() {
        return inner.adoptedBridges();
    }

    @Override
    public void deleteNetwork(String name, boolean force) {
        alone(() -> {
            Network n = inner.network(name);
            inner.deleteNetwork(name, force);
            // The listener heard of the mappings removed; these go too if a flush took them first.
            forget(m -> n.subnets().stream().anyMatch(p -> p.contains(m.containerIp())));
        });
    }

    @Override
    public List<Network> networks() {
        return inner.networks();
    }

    @Override
    public Network network(String name) {
        return inner.network(name);
    }

    @Override
    public Endpoint attach(EndpointSpec spec) {
        return alone(() -> inner.attach(spec));
    }

    @Override
    public void detach(String network, NetworkNamespace container, String ifname) {
        alone(() -> {
            List<Endpoint> before = inner.endpoints(network);
            inner.detach(network, container, ifname);
            forgetEndpointsGone(network, before);
        });
    }

    @Override
    public void detachOwner(String network, String owner) {
        alone(() -> {
            List<Endpoint> before = inner.endpoints(network);
            inner.detachOwner(network, owner);
            forgetEndpointsGone(network, before);
        });
    }

    @Override
    public List<Endpoint> endpoints(String network) {
        return inner.endpoints(network);
    }

    @Override
    public List<PortMapping> publish(PortRequest request) {
        return publish(request, HostPortCheck.CHECK);
    }

    @Override
    public List<PortMapping> publish(PortRequest request, HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publish(request, check)));
    }

    @Override
    public List<PortMapping> publishAll(PortsByAddress request, HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publishAll(request, check)));
    }

    @Override
    public int drain(List<PortMapping> mappings, Duration timeout) {
        return inner.drain(mappings, timeout);
    }

    @Override
    public Replacement replace(PortRequest request, HostPortCheck check, boolean keepUdpFlows) {
        return together(() -> inner.replace(request, check, keepUdpFlows));
    }

    @Override
    public List<PortMapping> unpublish(PortRequest request) {
        return timed("unpublish", () -> together(() -> inner.unpublish(request)));
    }

    /** Runs a publish or unpublish, telling {@link DriverStats} how long it took when something observes. */
    private static List<PortMapping> timed(String operation, Supplier<List<PortMapping>> work) {
        DriverStats.Observer o = DriverStats.observer();
        if (o == null) {
            return work.get();
        }
        long t0 = System.nanoTime();
        try {
            List<PortMapping> done = work.get();
            o.portsChanged(operation, done.size(), Duration.ofNanos(System.nanoTime() - t0), null);
            return done;
        } catch (RuntimeException e) {
            o.portsChanged(operation, 0, Duration.ofNanos(System.nanoTime() - t0), e);
            throw e;
        }
    }

    @Override
    public List<String> verify(Endpoint endpoint, NetworkNamespace container) {
        return inner.verify(endpoint, container);
    }

    @Override
    public List<PortMapping> publishOutside(PortRequest request, HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publishOutside(request, check)));
    }

    @Override
    public List<PortMapping> unpublishOutside(PortRequest request) {
        return timed("unpublish", () -> together(() -> inner.unpublishOutside(request)));
    }

    @Override
    public List<OutsideChange.Outcome> changeOutside(OutsideChange change) {
        DriverStats.Observer o = DriverStats.observer();
        if (o == null) {
            return together(() -> inner.changeOutside(change));
        }
        long t0 = System.nanoTime();
        try {
            List<OutsideChange.Outcome> done = together(() -> inner.changeOutside(change));
            java.time.Duration took = Duration.ofNanos(System.nanoTime() - t0);
            // Each part as a publish or unpublish of its own, all of them taking the one transaction's time.
            for (OutsideChange.Outcome c : done) {
                o.portsChanged(c.published() ? "publish" : "unpublish", c.mappings() == null ? 0 : c.mappings().size(),
                        took, c.refused());
            }
            return done;
        } catch (RuntimeException e) {
            o.portsChanged(change.publish().isEmpty() ? "unpublish" : "publish", 0,
                    Duration.ofNanos(System.nanoTime() - t0), e);
            throw e;
        }
    }

    @Override
    public List<PortMapping> publishedOutside() {
        return inner.publishedOutside();
    }

    /** Tells {@code listener} of what this driver commits, after it recorded it. */
    @Override
    public void listen(PortListener listener) {
        this.listener = listener;
    }

    @Override
    public List<PortMapping> published(String network) {
        return inner.published(network);
    }

    @Override
    public List<PortMapping> allPublished() {
        return inner.allPublished();
    }

    @Override
    public List<PortTraffic> allTraffic() {
        return inner.allTraffic();
    }

    @Override
    public List<PortTraffic> traffic(String network) {
        return inner.traffic(network);
    }

    @Override
    public List<String> hostPortsInUse() {
        return inner.hostPortsInUse();
    }

    @Override
    public List<ForeignDrop> foreignDrops() {
        return inner.foreignDrops();
    }

    @Override
    public List<LocalnetRoute> localnetRoutes() {
        return inner.localnetRoutes();
    }

    /**
     * After a detach: the driver removed the ports published to the endpoints that are gone, so
     * they are no longer wanted, also those a flush removed before (the listener heard of none).
     */
    private void forgetEndpointsGone(String network, List<Endpoint> before) {
        Set<String> still = new HashSet<>();
        inner.endpoints(network).forEach(e -> still.add(e.hostIfname()));
        Set<InetAddress> gone = new HashSet<>();
        for (Endpoint e : before) {
            if (!still.contains(e.hostIfname())) {
                gone.add(e.ip());
                if (e.ip6() != null) {
                    gone.add(e.ip6());
                }
            }
        }
        forget(m -> gone.contains(m.containerIp()));
    }

    private void forget(Predicate<PortMapping> which) {
        synchronized (wanted) {
            wanted.removeIf(which);
        }
    }

    private <T> T together(Supplier<T> work) {
        return under(lock.readLock(), work);
    }

    private <T> T alone(Supplier<T> work) {
        return under(lock.writeLock(), work);
    }

    private void alone(Runnable work) {
        this.<Void>alone(() -> {
            work.run();
            return null;
        });
    }

    private static <T> T under(Lock held, Supplier<T> work) {
        held.lock();
        try {
            return work.get();
        } finally {
            held.unlock();
        }
    }

    @Override
    public void close() {
        healer.close();
        inner.close();
    }
}
