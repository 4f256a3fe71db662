package dev.gatun.driver;

import dev.gatun.RetryableException;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.nft.RulesetMonitor;

import java.time.Duration;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A driver for a long-running process: it keeps the mappings published through it in memory
 * (starting from what the kernel holds) and puts back whatever someone else removes of its
 * packet-filter state, such as an {@code nft flush ruleset} or a firewall reload. The kernel's
 * nftables notifications wake it, so a repair follows a removal within milliseconds; a check
 * every few seconds backs them up. Concurrent publishes and unpublishes reach the inner driver
 * together (it commits them in shared transactions); repairs and changes to networks and
 * endpoints run alone. Mappings that other processes add or remove while it runs are theirs:
 * change them through this driver instead.
 */
public final class SelfHealingDriver implements GatunDriver {

    private static final String OWN_TABLE = "gatun";

    private final GatunDriver inner;
    private final Consumer<String> log;
    /**
     * Read: publish and unpublish. Write: repairs and topology. A repair never mistakes this
     * process's own unpublish for damage: holding the write lock, it runs while no publish or
     * unpublish is under way, and each of those recorded its commit in {@code wanted} (see
     * {@link Recorder}) before its caller got the result and let go of the read lock. So
     * {@code wanted} is what this process's commits left in the kernel, and whatever of it is
     * missing someone else removed. Its own commits do not even wake the healer: the kernel
     * names the committing thread of each transaction ({@link RulesetEvent#byThisProcess}).
     */
    private final ReadWriteLock lock = new ReentrantReadWriteLock();
    /** Guarded by itself: written by whichever thread commits, read by the repair and {@link #wanted()}. */
    private final WantedMappings wanted = new WantedMappings();
    private volatile PortListener listener;
    private volatile HealListener healListener;
    /** The changes of one transaction by another process to gatun's table, until its generation ends it (monitor thread only). */
    private final List<RulesetEvent> outsideChanges = new ArrayList<>();
    /** Why the next repair runs: the first change seen since the last one; guarded by {@link #wakeLock}. */
    private String repairCause;
    private HealListener.Cause repairKind;
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition woken = wakeLock.newCondition();
    /** When to repair and how much; guarded by {@link #wakeLock}. */
    private final HealSchedule schedule;
    private volatile boolean running = true;
    private final RulesetMonitor monitor;
    /** Hears every notification, so that the inner driver plans from memory (null: it reads). */
    private final Consumer<RulesetEvent> follower;
    private final Thread healer;

    private SelfHealingDriver(GatunDriver inner, Consumer<String> log, int eventQueueBytes, long backstopMillis) {
        this.inner = inner;
        this.log = log;
        this.schedule = new HealSchedule(backstopMillis);
        inner.listen(new Recorder());
        // Before the monitor starts: it then hears every notification from before the first publish.
        this.follower = inner.followRuleset();
        inner.allPublished().forEach(wanted::put);
        this.monitor = RulesetMonitor.start(inner.host(), this::onEvent, eventQueueBytes);
        this.healer = Thread.ofPlatform().daemon().name("gatun-healer").start(this::heal);
    }

    /**
     * Wraps {@code inner} (which must support {@link GatunDriver#repair}: the nftables
     * driver), reads its mappings from the kernel, repairs once, and starts watching.
     * {@code log} receives one line per thing put back and per failed repair.
     */
    public static SelfHealingDriver start(GatunDriver inner, Consumer<String> log) {
        return start(inner, log, 0);
    }

    /** {@link #start(GatunDriver, Consumer)}, telling {@code heal} of the first repair too. */
    public static SelfHealingDriver start(GatunDriver inner, Consumer<String> log, HealListener heal) {
        SelfHealingDriver d = new SelfHealingDriver(inner, log, 0, HealSchedule.BACKSTOP_MILLIS);
        d.healListener = heal;
        d.repairNow();
        return d;
    }

    /** {@link #start(GatunDriver, Consumer)} with the monitor's kernel queue this small (0: the default), for tests that overrun it. */
    static SelfHealingDriver start(GatunDriver inner, Consumer<String> log, int eventQueueBytes) {
        return start(inner, log, eventQueueBytes, HealSchedule.BACKSTOP_MILLIS);
    }

    /** With a backstop this often, for tests that watch it. */
    static SelfHealingDriver start(GatunDriver inner, Consumer<String> log, int eventQueueBytes, long backstopMillis) {
        SelfHealingDriver d = new SelfHealingDriver(inner, log, eventQueueBytes, backstopMillis);
        d.repairNow();
        return d;
    }

    /** How many times the nftables notifications overran so far, each followed by a repair that read everything. */
    long overruns() {
        return monitor.overruns();
    }

    /**
     * Notes what an event may have damaged. In gatun's own table a removal of elements marks
     * only their set; any other removal there, or a rule added, the whole table. In other tables only changes
     * to tables, chains, rules and sets matter (they are where gatun's jump and the drops it
     * opens live): elements another tool adds or removes in its own sets, perhaps thousands a
     * second, wake nothing.
     */
    private void onEvent(RulesetEvent e) {
        if (follower != null) {
            follower.accept(e);
        }
        if (e.kind() == RulesetEvent.Kind.NEW_GENERATION || e.kind() == RulesetEvent.Kind.OVERRUN) {
            // Named only when something is reported: naming reads /proc, and every commit ends in a NEWGEN.
            reportOutsideChanges(e.kind() == RulesetEvent.Kind.NEW_GENERATION ? e::committerName : () -> "not known");
        }
        boolean overrun = e.kind() == RulesetEvent.Kind.OVERRUN;
        boolean own = OWN_TABLE.equals(e.table());
        boolean foreign = overrun || e.table() != null && !own && switch (e.kind()) {
            case NEW_ELEMENTS, DELETE_ELEMENTS, NEW_GENERATION -> false;
            default -> true;
        };
        // A rule someone added to gatun's chains changes what they do as much as one removed.
        boolean ownRemoval = own && (e.isRemoval() || e.kind() == RulesetEvent.Kind.NEW_RULE);
        if (!foreign && !ownRemoval) {
            return;
        }
        // Asked last: it looks the committer up under /proc, and most events (the elements a
        // publish adds, another tool's sets) matter to no one.
        if (e.byThisProcess()) {
            // Its own unpublish, network removal or repair: what it did on purpose is no damage,
            // and a repair per unpublish would hold every publish up (a repair takes milliseconds).
            return;
        }
        if (own) {
            outsideChanges.add(e);
        }
        wakeLock.lock();
        try {
            if (repairCause == null) {
                repairKind = overrun ? HealListener.Cause.EVENTS_LOST
                        : own ? HealListener.Cause.OWN_TABLE : HealListener.Cause.OTHER_TABLE;
                repairCause = overrun ? "nftables notifications were lost"
                        : (own ? "gatun's table" : "table " + e.family() + " " + e.table()) + " changed by another process";
            }
            if (overrun) {
                // Lost notifications, of any table: what is gone cannot be told, so all is read again.
                schedule.overran();
            } else if (ownRemoval && e.kind() == RulesetEvent.Kind.DELETE_ELEMENTS) {
                schedule.elementsRemoved(e.name());
            } else {
                schedule.changed(ownRemoval, foreign);
            }
            woken.signal();
        } finally {
            wakeLock.unlock();
        }
    }

    private void heal() {
        while (running) {
            boolean backstop;
            long settle;
            wakeLock.lock();
            try {
                backstop = !schedule.damageSuspected() && !woken.await(schedule.backstopMillis(), TimeUnit.MILLISECONDS);
                if (backstop && schedule.recheckingAfterOverrun() && repairCause == null) {
                    repairKind = HealListener.Cause.EVENTS_LOST;
                    repairCause = "the check after lost nftables notifications";
                }
                schedule.woke(backstop);
                settle = schedule.settleMillis();
            } catch (InterruptedException e) {
                return;
            } finally {
                wakeLock.unlock();
            }
            try {
                Thread.sleep(settle);
            } catch (InterruptedException e) {
                return;
            }
            // Legacy iptables sends no notifications: while it has a table, the backstop looks at every firewall.
            boolean poll = backstop && mustPollOtherFirewalls();
            HealSchedule.Repair repair;
            String cause;
            HealListener.Cause kind;
            wakeLock.lock();
            try {
                repair = schedule.take(poll);
                kind = repairCause != null ? repairKind
                        : backstop ? HealListener.Cause.PERIODIC_CHECK : HealListener.Cause.RETRY;
                cause = repairCause != null ? repairCause : backstop ? "the periodic check" : "a retry";
                repairCause = null;
            } finally {
                wakeLock.unlock();
            }
            if (!running) {
                return;
            }
            if (repair == null) {
                continue;
            }
            if (repair.eventsLost()) {
                log.accept("nftables notifications were lost (the event socket overran, ENOBUFS): reading the whole "
                        + "ruleset again");
            }
            repairNow(repair, kind, cause);
        }
    }

    private void repairNow() {
        repairNow(new HealSchedule.Repair(true, true, Set.of(), false), HealListener.Cause.START, "the start");
    }

    /** Tells the heal listener of the transaction of another process that just ended, if it touched gatun's table. */
    private void reportOutsideChanges(Supplier<String> committer) {
        if (outsideChanges.isEmpty()) {
            return;
        }
        String by = committer.get();
        String what = OutsideChanges.describe(outsideChanges);
        outsideChanges.clear();
        HealListener l = healListener;
        if (l != null) {
            l.changedOutside(what, by);
        }
    }

    /** Whether the backstop must read the other firewalls; when that cannot be told, it reads them. */
    private boolean mustPollOtherFirewalls() {
        try {
            return inner.otherFirewallsNeedPolling();
        } catch (RuntimeException e) {
            return true;
        }
    }

    /**
     * Repairs now, logging what it put back; a failure is logged and tried again soon, not only
     * at the next notification (after a flood none may come) or the backstop. Other firewalls
     * are read only when the repair says so: that can cost a few processes. Of gatun's own table
     * it reads everything, or only the sets someone removed elements of, or nothing.
     */
    private void repairNow(HealSchedule.Repair r, HealListener.Cause kind, String cause) {
        alone(() -> {
            long t0 = System.nanoTime();
            try {
                List<String> repaired = new ArrayList<>();
                if (r.wholeTable()) {
                    // The wanted list is made only for a repair of gatun's own table: the backstop's
                    // check of the other firewalls every 5 s would make 100,000 mappings for nothing.
                    List<PortMapping> keep = wanted();
                    repaired.addAll(r.foreign() ? inner.repair(keep) : inner.repairOwnRuleset(keep));
                } else {
                    if (!r.sets().isEmpty()) {
                        repaired.addAll(inner.repairElements(r.sets(), wanted()));
                    }
                    if (r.foreign()) {
                        repaired.addAll(inner.repairOtherFirewalls());
                    }
                }
                for (String line : repaired) {
                    log.accept("repaired " + line);
                }
                HealListener l = healListener;
                if (l != null && !repaired.isEmpty()) {
                    l.repaired(List.copyOf(repaired), kind, cause, java.time.Duration.ofNanos(System.nanoTime() - t0));
                }
                wakeLock.lock();
                try {
                    schedule.succeeded();
                } finally {
                    wakeLock.unlock();
                }
            } catch (RuntimeException e) {
                log.accept("repair failed: " + e.getMessage());
                HealListener l = healListener;
                if (l != null) {
                    l.repairFailed(e.getMessage(), kind, cause);
                }
                wakeLock.lock();
                try {
                    schedule.failed(r, e instanceof RetryableException);
                    woken.signal();
                } finally {
                    wakeLock.unlock();
                }
            }
        });
    }

    /** The mappings this driver keeps in place. */
    public List<PortMapping> wanted() {
        synchronized (wanted) {
            return wanted.toList();
        }
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
    public List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return publish(network, containerIp, ports, owner, HostPortCheck.CHECK);
    }

    @Override
    public List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publish(network, containerIp, ports, owner, check)));
    }

    @Override
    public List<PortMapping> publishAll(String network, Map<InetAddress, List<PortSpec>> ports, String owner,
                                        HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publishAll(network, ports, owner, check)));
    }

    @Override
    public int drain(List<PortMapping> mappings, Duration timeout) {
        return inner.drain(mappings, timeout);
    }

    @Override
    public Replacement replace(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                               HostPortCheck check, boolean keepUdpFlows) {
        return together(() -> inner.replace(network, containerIp, ports, owner, check, keepUdpFlows));
    }

    @Override
    public List<PortMapping> unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return timed("unpublish", () -> together(() -> inner.unpublish(network, containerIp, ports, owner)));
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
            o.portsChanged(operation, done.size(), java.time.Duration.ofNanos(System.nanoTime() - t0), null);
            return done;
        } catch (RuntimeException e) {
            o.portsChanged(operation, 0, java.time.Duration.ofNanos(System.nanoTime() - t0), e);
            throw e;
        }
    }

    @Override
    public List<String> verify(Endpoint endpoint, NetworkNamespace container) {
        return inner.verify(endpoint, container);
    }

    @Override
    public List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner,
                                            HostPortCheck check) {
        return timed("publish", () -> together(() -> inner.publishOutside(label, containerIp, ports, owner, check)));
    }

    @Override
    public List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return timed("unpublish", () -> together(() -> inner.unpublishOutside(label, containerIp, ports, owner)));
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
            java.time.Duration took = java.time.Duration.ofNanos(System.nanoTime() - t0);
            // Each part as a publish or unpublish of its own, all of them taking the one transaction's time.
            for (OutsideChange.Outcome c : done) {
                o.portsChanged(c.published() ? "publish" : "unpublish", c.mappings() == null ? 0 : c.mappings().size(),
                        took, c.refused());
            }
            return done;
        } catch (RuntimeException e) {
            o.portsChanged(change.publish().isEmpty() ? "unpublish" : "publish", 0,
                    java.time.Duration.ofNanos(System.nanoTime() - t0), e);
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

    /** A self-healing driver hands its inner driver the notifications itself: nothing more to follow. */
    @Override
    public Consumer<RulesetEvent> followRuleset() {
        return null;
    }

    /** Tells {@code listener} of each outside change of gatun's table this driver sees and of each repair. */
    public void listenToHealing(HealListener listener) {
        this.healListener = listener;
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

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        return alone(() -> inner.repair(mappings));
    }

    @Override
    public List<String> repairOwnRuleset(List<PortMapping> mappings) {
        return alone(() -> inner.repairOwnRuleset(mappings));
    }

    @Override
    public List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        return alone(() -> inner.repairElements(sets, mappings));
    }

    @Override
    public List<String> repairOtherFirewalls() {
        return alone(inner::repairOtherFirewalls);
    }

    @Override
    public boolean otherFirewallsNeedPolling() {
        return inner.otherFirewallsNeedPolling();
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
        alone(() -> {
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
        running = false;
        healer.interrupt();
        try {
            healer.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        monitor.close();
        inner.close();
    }
}
