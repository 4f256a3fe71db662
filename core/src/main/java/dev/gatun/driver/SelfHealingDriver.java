package dev.gatun.driver;

import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.nft.RulesetMonitor;

import java.net.InetAddress;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A driver for a long-running process: it keeps the mappings published through it in memory
 * (starting from what the kernel holds) and puts back whatever someone else removes of its
 * packet-filter state, such as an {@code nft flush ruleset} or a firewall reload. The kernel's
 * nftables notifications wake it, so a repair follows a removal within milliseconds; a check
 * every few seconds backs them up. Changes through this driver and repairs take one lock, so a
 * repair never mistakes this process's own unpublish for damage. Mappings that other processes
 * add or remove while it runs are theirs: change them through this driver instead.
 */
public final class SelfHealingDriver implements NetworkDriver {

    /** A flush arrives as many notifications: wait this long for the rest, then repair once. */
    private static final long SETTLE_MILLIS = 20;
    private static final long BACKSTOP_MILLIS = 5_000;
    private static final String OWN_TABLE = "gatun";

    private final NetworkDriver inner;
    private final Consumer<String> log;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<PortMapping.HostKey, PortMapping> wanted = new LinkedHashMap<>();
    private final ReentrantLock wakeLock = new ReentrantLock();
    private final Condition woken = wakeLock.newCondition();
    private boolean damageSuspected;
    /** Another table changed (a firewall reload, dockerd rebuilding its chains): check what gatun added to it. */
    private boolean foreignChanged;
    private volatile boolean running = true;
    private final RulesetMonitor monitor;
    private final Thread healer;

    private SelfHealingDriver(NetworkDriver inner, Consumer<String> log) {
        this.inner = inner;
        this.log = log;
        inner.published(null).forEach(m -> wanted.put(m.hostKey(), m));
        this.monitor = RulesetMonitor.start(inner.host(), this::onEvent);
        this.healer = Thread.ofPlatform().daemon().name("gatun-healer").start(this::heal);
    }

    /**
     * Wraps {@code inner} (which must support {@link NetworkDriver#repair}: the nftables
     * driver), reads its mappings from the kernel, repairs once, and starts watching.
     * {@code log} receives one line per thing put back and per failed repair.
     */
    public static SelfHealingDriver start(NetworkDriver inner, Consumer<String> log) {
        SelfHealingDriver d = new SelfHealingDriver(inner, log);
        d.repairNow();
        return d;
    }

    private void onEvent(RulesetEvent e) {
        boolean foreign = e.kind() == RulesetEvent.Kind.OVERRUN
                || e.table() != null && !e.table().equals(OWN_TABLE) && e.kind() != RulesetEvent.Kind.NEW_GENERATION;
        if (e.isRemoval() || foreign) {
            wakeLock.lock();
            try {
                damageSuspected = true;
                foreignChanged |= foreign;
                woken.signal();
            } finally {
                wakeLock.unlock();
            }
        }
    }

    private void heal() {
        while (running) {
            boolean foreign;
            wakeLock.lock();
            try {
                if (!damageSuspected && !woken.await(BACKSTOP_MILLIS, TimeUnit.MILLISECONDS)) {
                    // Legacy iptables sends no notifications: the backstop looks at every firewall.
                    foreignChanged = true;
                }
                damageSuspected = false;
            } catch (InterruptedException e) {
                return;
            } finally {
                wakeLock.unlock();
            }
            try {
                Thread.sleep(SETTLE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            wakeLock.lock();
            try {
                foreign = foreignChanged;
                foreignChanged = false;
            } finally {
                wakeLock.unlock();
            }
            if (running) {
                repairNow(foreign);
            }
        }
    }

    private void repairNow() {
        repairNow(true);
    }

    /**
     * Repairs now, logging what it put back; a failure is logged and tried again at the next
     * wake. Other firewalls are read only when {@code foreign}: that costs a few processes.
     */
    private void repairNow(boolean foreign) {
        locked(() -> {
            try {
                List<PortMapping> keep = List.copyOf(wanted.values());
                for (String line : foreign ? inner.repair(keep) : inner.repairOwnRuleset(keep)) {
                    log.accept("repaired " + line);
                }
            } catch (RuntimeException e) {
                log.accept("repair failed: " + e.getMessage());
            }
        });
    }

    /** The mappings this driver keeps in place. */
    public List<PortMapping> wanted() {
        return locked(() -> List.copyOf(wanted.values()));
    }

    @Override
    public NetworkNamespace host() {
        return inner.host();
    }

    @Override
    public Network createNetwork(NetworkSpec spec) {
        return locked(() -> inner.createNetwork(spec));
    }

    @Override
    public void deleteNetwork(String name, boolean force) {
        locked(() -> {
            Network n = inner.network(name);
            inner.deleteNetwork(name, force);
            wanted.values().removeIf(m -> n.subnets().stream().anyMatch(p -> p.contains(m.containerIp())));
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
        return locked(() -> inner.attach(spec));
    }

    @Override
    public void detach(String network, NetworkNamespace container, String ifname) {
        locked(() -> {
            List<Endpoint> before = inner.endpoints(network);
            inner.detach(network, container, ifname);
            forgetEndpointsGone(network, before);
        });
    }

    @Override
    public void detachOwner(String network, String owner) {
        locked(() -> {
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
        return locked(() -> {
            List<PortMapping> made = inner.publish(network, containerIp, ports, owner);
            made.forEach(m -> wanted.put(m.hostKey(), m));
            return made;
        });
    }

    @Override
    public List<PortMapping> unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return locked(() -> {
            List<PortMapping> removed = inner.unpublish(network, containerIp, ports, owner);
            removed.forEach(m -> wanted.remove(m.hostKey()));
            return removed;
        });
    }

    @Override
    public List<PortMapping> published(String network) {
        return inner.published(network);
    }

    @Override
    public List<ForeignDrop> foreignDrops() {
        return inner.foreignDrops();
    }

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        return locked(() -> inner.repair(mappings));
    }

    /** After a detach: the driver removed the ports published to the endpoints that are gone, so they are no longer wanted. */
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
        wanted.values().removeIf(m -> gone.contains(m.containerIp()));
    }

    private <T> T locked(java.util.function.Supplier<T> work) {
        lock.lock();
        try {
            return work.get();
        } finally {
            lock.unlock();
        }
    }

    private void locked(Runnable work) {
        locked(() -> {
            work.run();
            return null;
        });
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
