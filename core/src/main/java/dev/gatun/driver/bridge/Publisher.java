package dev.gatun.driver.bridge;

import dev.gatun.internal.InetText;
import dev.gatun.GatunException;
import dev.gatun.RetryableException;
import dev.gatun.InvalidInputException;
import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.HostSockets;
import dev.gatun.sockdiag.SocketOwners;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Publishes and unpublishes port mappings, with group commit: requests from many threads
 * queue up, and whichever caller holds the lock turns everything waiting into one commit,
 * guarded by what it read (the generation id, for nftables). Each request gets its own
 * result; one request's conflict never fails another's. The store is used by one thread at a
 * time, so libnftnl objects are never shared. A {@link PortListener} is told of each commit
 * under the same lock, so in commit order.
 */
final class Publisher implements AutoCloseable {

    /** One mapping to make, before it has an owner. */
    record Wanted(Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp, int containerPort) {}

    /** Which mappings an unpublish removes: by host port keys, or all matching a filter. */
    record Selection(InetAddress containerIp, List<Wanted> keys, String owner, Predicate<PortMapping> all) {}

    private sealed interface Request permits Publish, Unpublish {
        /** The network whose name the request's mappings carry. */
        String network();

        Outcome result();

        /** The thread waiting for the result: woken when it is in, or to lead what a leader left. */
        Thread caller();
    }

    /** {@code checkHost}: whether the host's sockets are asked if they hold a port (see {@link HostPortCheck}). */
    private record Publish(String network, List<Wanted> mappings, String owner, boolean checkHost, Outcome result,
                           Thread caller) implements Request {}

    private record Unpublish(String network, Selection selection, Outcome result, Thread caller) implements Request {}

    /**
     * Where the leader leaves a request's result (its mappings, or the exception to throw) and
     * its caller finds it. Only the thread holding the leader lock sets it, once.
     */
    private static final class Outcome {
        private volatile Object value;

        boolean isDone() {
            return value != null;
        }

        void set(Object result) {
            if (value == null) {
                value = result;
            }
        }

        @SuppressWarnings("unchecked")
        List<PortMapping> get() {
            if (value instanceof RuntimeException e) {
                throw e;
            }
            return (List<PortMapping>) value;
        }
    }

    /** A mapping's identity, with a mapping of that key to ask the store with. */
    private record Key(PortMapping.HostKey id, PortMapping example) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.id.equals(id);
        }

        @Override
        public int hashCode() {
            return id.hashCode();
        }
    }

    private static final int MAX_BATCH = 512;
    private static final int MAX_ATTEMPTS = 200;
    /** How often one batch is planned again after its commit lost its reply (each loss may take a reply timeout). */
    private static final int MAX_LOST_REPLIES = 3;
    private static final int MAX_BATCHES_FOR_OTHERS = 4;
    /** How long a waiting caller parks before it looks again, should no wake-up come. */
    private static final long WAIT_NANOS = 1_000_000;

    private final NetworkNamespace host;
    private final Firewall firewall;
    private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
    /** Held by the thread committing for everyone waiting; the others queue up behind it. */
    private final ReentrantLock leader = new ReentrantLock();
    private MappingStore store;
    private Conntrack conntrack;
    /** The host's sock_diag socket, opened at the first publish that asks it. */
    private HostSockets sockets;
    private volatile boolean closed;
    private volatile PortListener listener;

    /** The host's addresses, which a publish on every address must not overlap on one of them. */
    private final Supplier<List<InetAddress>> hostAddresses;

    /** Opens the conntrack socket of the namespace (replaceable so a test can hand in one that fails). */
    private final java.util.function.Function<NetworkNamespace, Conntrack> openConntrack;

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    Publisher(NetworkNamespace host, Firewall firewall, Supplier<List<InetAddress>> hostAddresses) {
        this(host, firewall, hostAddresses, Conntrack::open);
    }

    Publisher(NetworkNamespace host, Firewall firewall, Supplier<List<InetAddress>> hostAddresses,
              java.util.function.Function<NetworkNamespace, Conntrack> openConntrack) {
        this.host = host;
        this.firewall = firewall;
        this.hostAddresses = hostAddresses;
        this.openConntrack = openConntrack;
    }

    /** Publishes to a container of {@code network}, whose name the returned mappings carry, after asking the host's sockets. */
    List<PortMapping> publish(String network, List<Wanted> mappings, String owner) {
        return publish(network, mappings, owner, HostPortCheck.CHECK);
    }

    /** Publishes to a container of {@code network}, whose name the returned mappings carry. */
    List<PortMapping> publish(String network, List<Wanted> mappings, String owner, HostPortCheck check) {
        return await(new Publish(network, List.copyOf(mappings), owner, check == HostPortCheck.CHECK, new Outcome(),
                Thread.currentThread()));
    }

    /** Unpublishes mappings of {@code network}, whose name the returned mappings carry. */
    List<PortMapping> unpublish(String network, Selection selection) {
        return await(new Unpublish(network, selection, new Outcome(), Thread.currentThread()));
    }

    /** Tells {@code l} of every commit from now on (null: nobody). */
    void listen(PortListener l) {
        listener = l;
    }

    /**
     * Group commit without a thread of its own: a caller that finds nobody committing leads,
     * turning everything queued into transactions until the queue is empty; callers that find
     * a leader wait for their own result, which the leader hands them directly (they do not
     * queue up on the lock, so 16 waiting threads wake together, not one after another). A lone
     * caller commits on its own thread without queueing at all.
     */
    private List<PortMapping> await(Request r) {
        if (closed) {
            throw new IllegalStateException("the driver is closed");
        }
        if (queue.isEmpty() && leader.tryLock()) {
            try {
                commitAlone(r);
            } finally {
                leader.unlock();
            }
            if (!queue.isEmpty()) {
                // Callers that came meanwhile found the lock taken and wait: serve them as a leader would.
                lead(r);
            }
        } else {
            queue.add(r);
        }
        while (!r.result().isDone()) {
            lead(r);
            if (!r.result().isDone()) {
                // Woken with the result, or by a leader that stopped with requests still queued
                // (see lead); the timeout is only a safety net.
                LockSupport.parkNanos(this, WAIT_NANOS);
                if (Thread.currentThread().isInterrupted()) {
                    throw new GatunException("interrupted while waiting for a commit (it may still be made)");
                }
            }
        }
        return r.result().get();
    }

    /** Commits one request under the leader lock, as a batch of its own. */
    private void commitAlone(Request r) {
        try {
            open();
            process(store, conntrack, List.of(r));
        } catch (RuntimeException e) {
            fail(r, e);
        }
    }

    /**
     * Commits what is queued if nobody else is committing. After unlocking it looks at the
     * queue again: a request added while it held the lock, whose caller found the lock taken,
     * is served by it or by whoever took the lock since (who looks again in turn). Once its own
     * request is answered it serves a few more batches at most, so that its caller is not kept
     * serving others for as long as they keep coming; what it leaves, their callers take over.
     */
    private void lead(Request own) {
        int extra = 0;
        while (!queue.isEmpty() && extra < MAX_BATCHES_FOR_OTHERS && leader.tryLock()) {
            try {
                List<Request> batch = new ArrayList<>();
                for (Request q; batch.size() < MAX_BATCH && (q = queue.poll()) != null; ) {
                    batch.add(q);
                }
                if (!batch.isEmpty()) {
                    try {
                        open();
                        process(store, conntrack, batch);
                    } catch (RuntimeException e) {
                        batch.forEach(q -> fail(q, e));
                    }
                }
            } finally {
                leader.unlock();
            }
            if (own.result().isDone()) {
                extra++;
            }
        }
        if (extra == MAX_BATCHES_FOR_OTHERS) {
            // Stopped with work queued: its first caller leads now, not at its timeout.
            Request next = queue.peek();
            if (next != null) {
                LockSupport.unpark(next.caller());
            }
        }
    }

    private static void answer(Request r, List<PortMapping> mappings) {
        r.result().set(mappings);
        wake(r);
    }

    private static void fail(Request r, RuntimeException e) {
        r.result().set(e);
        wake(r);
    }

    private static void wake(Request r) {
        if (r.caller() != Thread.currentThread()) {
            LockSupport.unpark(r.caller());
        }
    }

    /** Sockets for the committing thread of the moment; opened once, used under the lock only. */
    private void open() {
        // A caller that queued before close() and gets the lock after it must not reopen the
        // sockets (nobody would close them) nor commit on a closed driver.
        if (closed) {
            throw new IllegalStateException("the driver is closed");
        }
        if (store == null) {
            store = firewall.openStore();
        }
        if (conntrack == null) {
            conntrack = openConntrack.apply(host);
        }
    }

    /** Plans every request against the maps as they are, commits them together, and retries on a race. */
    private void process(MappingStore store, Conntrack conntrack, List<Request> batch) {
        List<InetAddress> addressesFirst = anyWildcard(batch) ? hostAddresses.get() : List.of();
        // Asked once: a retry after a stale nftables read is about gatun's maps, not the host's sockets.
        List<BoundSocket> held = heldSockets(batch, addressesFirst);
        // The outcomes and UDP flushes of an attempt whose commit lost its reply: it may have been applied.
        Object[] lost = null;
        List<PortMapping> lostFlushes = List.of();
        int lostReplies = 0;
        for (int attempt = 1; ; attempt++) {
            List<InetAddress> localAddresses = attempt == 1 ? addressesFirst
                    : anyWildcard(batch) ? hostAddresses.get() : List.of();
            Prefetched read = prefetched(store.begin(), batch, localAddresses);
            // A lone request's plan is the batch's: nothing to merge, no keys claimed by others.
            boolean alone = batch.size() == 1;
            Plan all = alone ? null : new Plan();
            // By position in the batch: a request's record hash would hash all its mappings.
            Object[] outcomes = new Object[batch.size()];
            Map<Key, PortMapping> claimed = alone ? Map.of() : new HashMap<>();
            List<PortMapping> flushes = new ArrayList<>();
            boolean changes = false;
            for (int i = 0; i < batch.size(); i++) {
                Request r = batch.get(i);
                try {
                    Plan plan;
                    if (r instanceof Publish p) {
                        plan = planPublish(read, p, claimed, localAddresses, held);
                    } else {
                        plan = planUnpublish(read, ((Unpublish) r).selection, claimed);
                    }
                    if (alone) {
                        all = plan;
                    } else {
                        plan.apply(all, claimed);
                    }
                    changes |= plan.changes();
                    flushes.addAll(plan.flush);
                    outcomes[i] = plan.result;
                    // After a lost reply, an unpublish of all that match that finds none removed them.
                    if (r instanceof Unpublish && plan.result.isEmpty() && lost != null && lost[i] instanceof List) {
                        outcomes[i] = lost[i];
                    }
                } catch (InvalidInputException | ConflictException e) {
                    // After a lost reply, an unpublish that finds its mappings gone is what made them go.
                    boolean done = e instanceof NotFoundException && r instanceof Unpublish && lost != null
                            && lost[i] instanceof List;
                    outcomes[i] = done ? lost[i] : e;
                }
            }
            flushes.addAll(lostFlushes);
            try {
                if (changes) {
                    read.view().commit(all.delete.values(), all.add.values());
                }
            } catch (MappingStore.StaleViewException e) {
                if (attempt < MAX_ATTEMPTS) {
                    // Someone changed the ruleset after we read it: back off a random while, plan again.
                    backOff(attempt);
                    continue;
                }
                GatunException gaveUp = e.getCause() instanceof GenerationConflictException c
                        ? GenerationConflictException.gaveUp(describe(batch), MAX_ATTEMPTS, c)
                        : new GatunException("gave up after " + MAX_ATTEMPTS + " attempts: other processes kept "
                                + "changing the ruleset between reading and committing", e.getCause());
                batch.forEach(r -> fail(r, gaveUp));
                return;
            } catch (RuntimeException e) {
                if (e instanceof RetryableException r && r.mayHaveApplied() && lostReplies < MAX_LOST_REPLIES) {
                    // A lost reply is not a lost commit: plan again from what the kernel holds now.
                    // A publish that was applied finds itself in place; an unpublish, its mappings gone.
                    lostReplies++;
                    lost = outcomes;
                    lostFlushes = flushes;
                    continue;
                }
                if (batch.size() > 1) {
                    // Something in the batch failed in the kernel: find whose by committing them one by one.
                    for (Request r : batch) {
                        process(store, conntrack, List.of(r));
                    }
                } else {
                    fail(batch.getFirst(), e);
                }
                return;
            }
            nameAndTell(batch, outcomes);
            // UDP only: a UDP client keeps its source port, so its old entry would keep it on the
            // old container, while a new TCP connection gets a new entry anyway. Finding entries
            // walks the host's whole conntrack table (milliseconds, over 1000x a publish), so it
            // is done once for the batch, and not for every TCP change (Docker also clears UDP
            // entries only).
            List<Conntrack.NattedPort> gone = new ArrayList<>();
            for (PortMapping m : flushes) {
                if (m.protocol() == Protocol.UDP) {
                    gone.add(new Conntrack.NattedPort(!(m.containerIp() instanceof Inet4Address), m.protocol().number(),
                            m.hostIp(), m.hostPort()));
                }
            }
            try {
                conntrack.deleteNatted(gone);
            } catch (RuntimeException e) {
                // The maps changed: the callers get their results, not an error that would make
                // them think nothing did (and retry into "already published").
                LOG.log(System.Logger.Level.WARNING, "ports changed in " + host.describe() + ", but the old conntrack "
                        + "entries of their UDP mappings could not be deleted (" + e.getMessage() + "): a UDP client "
                        + "may reach the old container until its entry expires");
            }
            for (int i = 0; i < batch.size(); i++) {
                if (outcomes[i] instanceof RuntimeException e) {
                    fail(batch.get(i), e);
                } else {
                    @SuppressWarnings("unchecked")
                    List<PortMapping> list = (List<PortMapping>) outcomes[i];
                    answer(batch.get(i), list);
                }
            }
            return;
        }
    }

    /**
     * Names each answered request's mappings, and tells the listener what they did in the order
     * the batch applied them, which is the kernel's order: the leader lock is held from the
     * commit to here, so the next batch is committed and told after this one.
     */
    private void nameAndTell(List<Request> batch, Object[] outcomes) {
        PortListener l = listener;
        for (int i = 0; i < batch.size(); i++) {
            if (outcomes[i] instanceof List<?> result) {
                Request r = batch.get(i);
                @SuppressWarnings("unchecked")
                List<PortMapping> done = named(r.network(), (List<PortMapping>) result);
                outcomes[i] = done;
                if (l != null && !done.isEmpty()) {
                    tell(l, r instanceof Publish, done);
                }
            }
        }
    }

    private void tell(PortListener l, boolean published, List<PortMapping> done) {
        try {
            if (published) {
                l.published(done);
            } else {
                l.unpublished(done);
            }
        } catch (RuntimeException e) {
            // The commit is made: its callers get their results, not the listener's failure.
            LOG.log(System.Logger.Level.WARNING, "a port listener failed in " + host.describe(), e);
        }
    }

    static List<PortMapping> named(String network, List<PortMapping> mappings) {
        // Loops, not streams, on the publish path: each stream pipeline is more code to bring back into a cold cache.
        List<PortMapping> out = new ArrayList<>(mappings.size());
        for (PortMapping m : mappings) {
            out.add(named(network, m));
        }
        return List.copyOf(out);
    }

    static PortMapping named(String network, PortMapping m) {
        return new PortMapping(network, m.protocol(), m.hostIp(), m.hostPort(), m.containerIp(), m.containerPort(), m.owner());
    }

    /** Whether a publish in the batch binds every host address (so the host's addresses are needed). */
    private static boolean anyWildcard(List<Request> batch) {
        for (Request r : batch) {
            if (r instanceof Publish p) {
                for (Wanted w : p.mappings) {
                    if (w.hostIp() == null) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * The view with every key the batch will ask about already read, in one round trip: a
     * publish's own key and the keys that would overlap it, an unpublish's keys.
     */
    private static Prefetched prefetched(MappingStore.View view, List<Request> batch, List<InetAddress> local) {
        List<PortMapping> keys = new ArrayList<>();
        for (Request r : batch) {
            if (r instanceof Publish p) {
                for (Wanted w : p.mappings) {
                    PortMapping m = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), 0, null);
                    keys.add(m);
                    boolean v4 = w.containerIp() instanceof Inet4Address;
                    if (w.hostIp() == null) {
                        for (InetAddress a : local) {
                            if ((a instanceof Inet4Address) == v4) {
                                keys.add(new PortMapping(null, w.protocol(), a, w.hostPort(), w.containerIp(), 0, null));
                            }
                        }
                    } else {
                        keys.add(new PortMapping(null, w.protocol(), null, w.hostPort(), w.containerIp(), 0, null));
                    }
                }
            } else if (r instanceof Unpublish u && u.selection().keys() != null) {
                for (Wanted w : u.selection().keys()) {
                    keys.add(new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), 0, null));
                }
            }
        }
        Map<Key, Optional<PortMapping>> known = new HashMap<>();
        List<Key> distinct = new ArrayList<>();
        List<PortMapping> asked = new ArrayList<>();
        for (PortMapping k : keys) {
            Key key = key(k);
            if (known.putIfAbsent(key, Optional.empty()) == null) {
                distinct.add(key);
                asked.add(k);
            }
        }
        List<Optional<PortMapping>> found = asked.isEmpty() ? List.of() : view.getAll(asked);
        for (int i = 0; i < distinct.size(); i++) {
            known.put(distinct.get(i), found.get(i));
        }
        return new Prefetched(view, known);
    }

    /** A view and what was read of it ahead, looked up by key. */
    private record Prefetched(MappingStore.View view, Map<Key, Optional<PortMapping>> known) {
        Optional<PortMapping> get(Key key) {
            Optional<PortMapping> o = known.get(key);
            return o != null ? o : view.get(key.example);
        }
    }

    /** How an error names the work of {@code batch}. */
    private String describe(List<Request> batch) {
        String what = batch.size() > 1 ? batch.size() + " publishes and unpublishes"
                : (batch.getFirst() instanceof Publish ? "publish to network " : "unpublish in network ")
                        + batch.getFirst().network();
        return what + " in " + host.describe();
    }

    private static void backOff(int attempt) {
        long micros = java.util.concurrent.ThreadLocalRandom.current().nextLong(10, 50L * Math.min(attempt, 20) + 20);
        LockSupport.parkNanos(micros * 1000);
    }

    /** What one request adds and deletes, and what it returns. */
    private static final class Plan {
        final Map<Key, PortMapping> add = new LinkedHashMap<>();
        final Map<Key, PortMapping> delete = new LinkedHashMap<>();
        final List<PortMapping> flush = new ArrayList<>();
        final List<PortMapping> result = new ArrayList<>();

        boolean changes() {
            return !add.isEmpty() || !delete.isEmpty();
        }

        /** Adds this request's changes to the batch's, and marks its keys as taken for later requests. */
        void apply(Plan batch, Map<Key, PortMapping> claimed) {
            delete.forEach((k, m) -> {
                if (batch.add.remove(k) == null) {
                    batch.delete.put(k, m);
                }
                claimed.put(k, null);
            });
            add.forEach((k, m) -> {
                batch.add.put(k, m);
                claimed.put(k, m);
            });
        }
    }

    private Plan planPublish(Prefetched view, Publish p, Map<Key, PortMapping> claimed, List<InetAddress> localAddresses,
                             List<BoundSocket> held) {
        Plan plan = new Plan();
        Set<Key> inRequest = new HashSet<>();
        for (Wanted w : p.mappings) {
            PortMapping m = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), w.containerPort(),
                    p.owner);
            Key key = key(m);
            if (!inRequest.add(key)) {
                throw new InvalidInputException("host port " + m.describeHost() + " is published twice in one request");
            }
            Optional<PortMapping> existing = current(view, key, claimed);
            if (existing.isPresent()) {
                PortMapping old = existing.get();
                if (!old.owner().equals(p.owner)) {
                    throw held(m, old);
                }
                if (sameTarget(old, m)) {
                    plan.result.add(old);
                    continue;
                }
                plan.delete.put(key, old);
                plan.flush.add(old);
            } else if (p.checkHost) {
                // A port gatun publishes already is gatun's: only a new one can take a service's traffic.
                checkHostSockets(m, held);
            }
            checkOverlaps(view, m, claimed, localAddresses);
            plan.add.put(key, m);
            plan.result.add(m);
        }
        return plan;
    }

    /**
     * The host's sockets that would take the traffic of the ports the batch's checking publishes
     * want, read once for the batch in one datagram per protocol: for a port on one address, the
     * socket the kernel would hand a packet to that address and port; for a port on every address,
     * the one for the wildcard and for each local address of the family (an IPv6 wildcard socket
     * without IPV6_V6ONLY is found for IPv4 too). SCTP is not asked.
     */
    private List<BoundSocket> heldSockets(List<Request> batch, List<InetAddress> localAddresses) {
        Set<InetSocketAddress> tcp = new LinkedHashSet<>();
        Set<InetSocketAddress> udp = new LinkedHashSet<>();
        for (Request r : batch) {
            if (r instanceof Publish p && p.checkHost) {
                for (Wanted w : p.mappings) {
                    Set<InetSocketAddress> to = w.protocol() == Protocol.TCP ? tcp : w.protocol() == Protocol.UDP ? udp : null;
                    if (to == null) {
                        continue;
                    }
                    if (w.hostIp() != null) {
                        to.add(new InetSocketAddress(w.hostIp(), w.hostPort()));
                        continue;
                    }
                    boolean v4 = w.containerIp() instanceof Inet4Address;
                    to.add(new InetSocketAddress(v4 ? WILDCARD4 : WILDCARD6, w.hostPort()));
                    for (InetAddress a : localAddresses) {
                        if ((a instanceof Inet4Address) == v4) {
                            to.add(new InetSocketAddress(a, w.hostPort()));
                        }
                    }
                }
            }
        }
        if (tcp.isEmpty() && udp.isEmpty()) {
            return List.of();
        }
        if (sockets == null) {
            sockets = HostSockets.open(host);
        }
        List<BoundSocket> held = new ArrayList<>(askSockets(Protocol.TCP, tcp));
        held.addAll(askSockets(Protocol.UDP, udp));
        return held;
    }

    /**
     * Up to this many addresses and ports of a protocol are looked up one by one, as the kernel
     * would for a packet; more (a bulk publish) are answered from one dump of the protocol's
     * sockets on their ports, both families: 200,000 lookups took a 100,000-port publish longer
     * than its commit. A dump also lists sockets bound to a device, which lookups miss, so it
     * refuses a little more, never less.
     */
    private static final int SOCKET_LOOKUPS_BEFORE_DUMP = 1024;

    private List<BoundSocket> askSockets(Protocol protocol, Set<InetSocketAddress> locals) {
        if (locals.isEmpty()) {
            return List.of();
        }
        if (locals.size() <= SOCKET_LOOKUPS_BEFORE_DUMP) {
            return sockets.receiving(protocol.number(), List.copyOf(locals));
        }
        Set<Integer> ports = new HashSet<>();
        int low = 65535;
        int high = 0;
        for (InetSocketAddress a : locals) {
            ports.add(a.getPort());
            low = Math.min(low, a.getPort());
            high = Math.max(high, a.getPort());
        }
        List<BoundSocket> out = new ArrayList<>();
        for (BoundSocket s : sockets.holdingRange(protocol.number(), low, high)) {
            if (ports.contains(s.port())) {
                out.add(s);
            }
        }
        return out;
    }

    private static final InetAddress WILDCARD4 = InetAddress.ofLiteral("0.0.0.0");
    private static final InetAddress WILDCARD6 = InetAddress.ofLiteral("::");

    /** Refuses a host port that a socket of the host holds, naming it and its process. */
    private void checkHostSockets(PortMapping m, List<BoundSocket> held) {
        for (BoundSocket s : held) {
            if (s.protocol() == m.protocol().number() && s.port() == m.hostPort()
                    && s.holds(m.containerIp() instanceof Inet4Address, m.hostIp())) {
                String process = SocketOwners.of(Set.of(s.inode())).get(s.inode());
                throw new ConflictException("host port " + m.describeHost() + " is in use on the host in "
                        + host.describe() + ": " + s.describe(process) + "; publishing it would take that traffic away");
            }
        }
    }

    /** A wildcard and an address-bound mapping of the same port must have the same owner. */
    private static void checkOverlaps(Prefetched view, PortMapping m, Map<Key, PortMapping> claimed,
                                      List<InetAddress> localAddresses) {
        List<Key> others = new ArrayList<>();
        boolean v4 = m.containerIp() instanceof Inet4Address;
        if (m.hostIp() == null) {
            for (InetAddress a : localAddresses) {
                if ((a instanceof Inet4Address) == v4) {
                    others.add(key(new PortMapping(null, m.protocol(), a, m.hostPort(), m.containerIp(), 0, null)));
                }
            }
        } else {
            others.add(key(new PortMapping(null, m.protocol(), null, m.hostPort(), m.containerIp(), 0, null)));
        }
        for (Key k : others) {
            Optional<PortMapping> o = current(view, k, claimed);
            if (o.isPresent() && !o.get().owner().equals(m.owner())) {
                throw held(m, o.get());
            }
        }
    }

    private Plan planUnpublish(Prefetched view, Selection s, Map<Key, PortMapping> claimed) {
        Plan plan = new Plan();
        if (s.keys() == null) {
            for (PortMapping m : view.view().all()) {
                Key k = key(m);
                if (claimed.containsKey(k)) {
                    PortMapping now = claimed.get(k);
                    if (now == null || !s.all().test(now)) {
                        continue;
                    }
                    m = now;
                }
                if (s.all().test(m)) {
                    plan.delete.put(k, m);
                    plan.flush.add(m);
                    plan.result.add(m);
                }
            }
            return plan;
        }
        for (Wanted w : s.keys()) {
            PortMapping wanted = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(),
                    w.containerPort(), s.owner());
            Key key = key(wanted);
            PortMapping old = current(view, key, claimed).orElseThrow(() -> new NotFoundException(
                    "no port " + wanted.describeHost() + " is published to " + InetText.of(s.containerIp())));
            if (!old.containerIp().equals(s.containerIp()) || old.containerPort() != w.containerPort()) {
                throw new NotFoundException("port " + wanted.describeHost() + " is published to "
                        + InetText.of(old.containerIp()) + ":" + old.containerPort() + ", not to "
                        + InetText.of(s.containerIp()) + ":" + w.containerPort());
            }
            if (!old.owner().equals(s.owner())) {
                throw new ConflictException("port " + wanted.describeHost() + " is held by owner " + old.owner()
                        + ", not by " + s.owner() + "; only its owner may unpublish it");
            }
            plan.delete.put(key, old);
            plan.flush.add(old);
            plan.result.add(old);
        }
        return plan;
    }

    /** The mapping for a key: as planned earlier in this batch, else as the store has it. */
    private static Optional<PortMapping> current(Prefetched view, Key key, Map<Key, PortMapping> claimed) {
        if (claimed.containsKey(key)) {
            return Optional.ofNullable(claimed.get(key));
        }
        return view.get(key);
    }

    private static ConflictException held(PortMapping wanted, PortMapping holder) {
        return new ConflictException("host port " + wanted.describeHost() + " is already published by owner "
                + holder.owner() + " (to " + InetText.of(holder.containerIp()) + ":" + holder.containerPort() + ")");
    }

    private static boolean sameTarget(PortMapping a, PortMapping b) {
        return a.containerIp().equals(b.containerIp()) && a.containerPort() == b.containerPort();
    }

    private static Key key(PortMapping m) {
        return new Key(m.hostKey(), m);
    }

    @Override
    public void close() {
        closed = true;
        leader.lock();
        try {
            if (store != null) {
                store.close();
                store = null;
            }
            if (conntrack != null) {
                conntrack.close();
                conntrack = null;
            }
            if (sockets != null) {
                sockets.close();
                sockets = null;
            }
        } finally {
            leader.unlock();
        }
    }
}
