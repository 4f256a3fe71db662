package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.sockdiag.SocketOwners;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Publishes and unpublishes port mappings, with group commit: requests from many threads
 * queue up, and whichever caller holds the lock turns everything waiting into one commit
 * ({@link CommitLoop}), guarded by what it read (the generation id, for nftables). Each request
 * gets its own result; one request's conflict never fails another's. The store is used by one
 * thread at a time, so libnftnl objects are never shared. A {@link PortListener} is told of each
 * commit under the same lock, so in commit order.
 */
final class Publisher implements AutoCloseable {

    /** One mapping to make, before it has an owner. */
    record Wanted(Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp, int containerPort) {}

    /** Which mappings an unpublish removes: by host port keys, or all matching a filter. */
    record Selection(InetAddress containerIp, List<Wanted> keys, String owner, Predicate<PortMapping> all) {}

    /**
     * Requests waiting for their commit: what was asked (several only when they must go in the
     * same batch), where their results go, and the thread waiting for them, woken when they are
     * in or to lead what a leader left.
     */
    private record Request(List<PortRequest> asked, Outcome result, Thread caller) {}

    /**
     * Where the leader leaves a request's result (each asked's answer, or the exception to throw
     * for all) and its caller finds it. Only the thread holding the leader lock sets it, once.
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

        /** On the caller's thread, the leader lock let go: a port a process holds is named here, not while planning. */
        @SuppressWarnings("unchecked")
        List<PortPlanner.Answer> get() {
            if (value instanceof HostPortInUseException e) {
                throw e.namingItsProcess();
            }
            if (value instanceof RuntimeException e) {
                throw e;
            }
            return (List<PortPlanner.Answer>) value;
        }
    }

    private static final int MAX_BATCH = 512;
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
    /** The host's sockets, asked at the first publish that checks its ports. */
    private final HostSocketQuestion sockets;
    /** Made once the store and conntrack are open; used under the leader lock only. */
    private CommitLoop committer;
    private volatile boolean closed;
    private volatile PortListener listener;

    /** The host's addresses, which a publish on every address must not overlap on one of them. */
    private final Supplier<List<InetAddress>> hostAddresses;

    /** Opens the conntrack socket of the namespace (replaceable so a test can hand in one that fails). */
    private final Function<NetworkNamespace, Conntrack> openConntrack;
    private final Supplier<CountedSubnets> counted;

    Publisher(NetworkNamespace host, Firewall firewall, Supplier<List<InetAddress>> hostAddresses) {
        this(host, firewall, hostAddresses, () -> CountedSubnets.NONE, Conntrack::open);
    }

    Publisher(NetworkNamespace host, Firewall firewall, Supplier<List<InetAddress>> hostAddresses,
              Function<NetworkNamespace, Conntrack> openConntrack) {
        this(host, firewall, hostAddresses, () -> CountedSubnets.NONE, openConntrack);
    }

    /** {@code counted}: which mappings get a counter, asked once per commit. */
    Publisher(NetworkNamespace host, Firewall firewall, Supplier<List<InetAddress>> hostAddresses,
              Supplier<CountedSubnets> counted, Function<NetworkNamespace, Conntrack> openConntrack) {
        this.host = host;
        this.firewall = firewall;
        this.hostAddresses = hostAddresses;
        this.counted = counted;
        this.openConntrack = openConntrack;
        this.sockets = new HostSocketQuestion(host);
    }

    /** Publishes to a container of {@code network}, whose name the returned mappings carry, after asking the host's sockets. */
    List<PortMapping> publish(String network, List<Wanted> mappings, String owner) {
        return publish(network, mappings, owner, HostPortCheck.CHECK);
    }

    /** Publishes to a container of {@code network}, whose name the returned mappings carry. */
    List<PortMapping> publish(String network, List<Wanted> mappings, String owner, HostPortCheck check) {
        return awaitPublish(network, mappings, owner, check, PortRequest.Replace.NO).mappings();
    }

    /**
     * {@link #publish(String, List, String, HostPortCheck)}, with the network's entries added in
     * the same transaction where they are not there yet (see {@link Firewall#entriesWithMappings}),
     * also when every port is refused.
     */
    List<PortMapping> publishWithEntries(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                         BridgeRules networkEntries) {
        return awaitOne(publishRequest(network, mappings, owner, check, PortRequest.Replace.NO, networkEntries)).mappings();
    }

    /**
     * Publishes as {@link #publish(String, List, String, HostPortCheck)}, taking every key another
     * owner holds exactly (same family, address, protocol and port) in the same transaction;
     * a key that only overlaps another owner's stays a conflict.
     */
    Replacement replace(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                        boolean keepUdpFlows) {
        PortRequest.Replace how = keepUdpFlows ? PortRequest.Replace.KEEPING_UDP_FLOWS
                : PortRequest.Replace.DELETING_UDP_FLOWS;
        PortPlanner.Answer a = awaitPublish(network, mappings, owner, check, how);
        return new Replacement(a.mappings(), a.replaced());
    }

    private PortPlanner.Answer awaitPublish(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                            PortRequest.Replace how) {
        return awaitOne(publishRequest(network, mappings, owner, check, how, null));
    }

    private PortRequest.Publish publishRequest(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                               PortRequest.Replace how, BridgeRules networkEntries) {
        List<Wanted> wanted = List.copyOf(mappings);
        Set<Long> engine = check.engineNames().isEmpty() ? Set.of() : engineSockets(network, wanted, owner, check.engineNames());
        return new PortRequest.Publish(network, wanted, owner, check.asks(), engine, how, networkEntries);
    }

    /** A publish for {@link #together}: as {@link #publish(String, List, String, HostPortCheck)} would send it. */
    PortRequest publishing(String network, List<Wanted> mappings, String owner, HostPortCheck check) {
        return publishRequest(network, mappings, owner, check, PortRequest.Replace.NO, null);
    }

    /** An unpublish for {@link #together}: as {@link #unpublish} would send it. */
    static PortRequest unpublishing(String network, Selection selection) {
        return new PortRequest.Unpublish(network, selection);
    }

    /**
     * Commits {@code requests} in one batch, so in one transaction unless the kernel refuses it
     * (then one by one, as any batch); each gets its own answer, in order, and one request's
     * refusal, said in its answer, never fails another. A port a process holds is named in the
     * refusal, as for a lone publish.
     */
    List<PortPlanner.Answer> together(List<PortRequest> requests) {
        List<PortPlanner.Answer> answers = await(new Request(List.copyOf(requests), new Outcome(), Thread.currentThread()));
        List<PortPlanner.Answer> out = new ArrayList<>(answers.size());
        for (PortPlanner.Answer a : answers) {
            out.add(a.refused() instanceof HostPortInUseException e
                    ? new PortPlanner.Answer(null, e.namingItsProcess(), a.replaced()) : a);
        }
        return out;
    }

    /**
     * The sockets on the ports of {@code wanted} that a process of {@code engineNames} holds:
     * found on this caller's thread before it queues, since finding the engine's processes reads
     * /proc, which the leader must not do for everyone waiting. A socket that changes hands
     * after this is found again by the leader's own question, and then refused.
     */
    private Set<Long> engineSockets(String network, List<Wanted> wanted, String owner, Set<String> engineNames) {
        Set<Long> holding = new HashSet<>();
        try (HostSocketQuestion question = new HostSocketQuestion(host)) {
            question.of(List.of(new PortRequest.Publish(network, wanted, owner, true)), hostAddresses.get())
                    .forEach(s -> holding.add(s.inode()));
        }
        return SocketOwners.heldBy(holding, engineNames);
    }

    /** Unpublishes mappings of {@code network}, whose name the returned mappings carry. */
    List<PortMapping> unpublish(String network, Selection selection) {
        return awaitOne(new PortRequest.Unpublish(network, selection)).mappings();
    }

    /** One request's answer; its refusal is thrown. */
    private PortPlanner.Answer awaitOne(PortRequest asked) {
        PortPlanner.Answer a = await(new Request(List.of(asked), new Outcome(), Thread.currentThread())).getFirst();
        if (a.refused() != null) {
            throw a.refused() instanceof HostPortInUseException e ? e.namingItsProcess() : a.refused();
        }
        return a;
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
    private List<PortPlanner.Answer> await(Request r) {
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
            process(List.of(r));
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
                        process(batch);
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

    private static void answer(Request r, List<PortPlanner.Answer> a) {
        r.result().set(a);
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

    /**
     * Plans from memory from the next publish on (see {@link FollowedMappingStore}), if the
     * firewall's kernel side sends notifications: the returned consumer must hear every one of
     * them, in order, from before that publish on (memory is read at it). Null where there are
     * none to hear; the store reads, as before.
     */
    Consumer<RulesetEvent> follow() {
        leader.lock();
        try {
            if (closed) {
                throw new IllegalStateException("the driver is closed");
            }
            MapChanges changes = new MapChanges();
            FollowedMappingStore followed = firewall.openFollowedStore(counted, changes);
            if (followed == null) {
                return null;
            }
            if (store != null) {
                store.close();
            }
            store = followed;
            committer = null;
            // A driver that follows runs long: its sockets are opened now, not by its first
            // publish (a serve's first request took some milliseconds more for them).
            open();
            sockets.open();
            return changes;
        } finally {
            leader.unlock();
        }
    }

    /** How often the store read the kernel instead of answering from memory (-1: it keeps no memory). */
    long reads() {
        leader.lock();
        try {
            return store instanceof FollowedMappingStore f ? f.reads() : -1;
        } finally {
            leader.unlock();
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
            store = firewall.openStore(counted);
        }
        if (conntrack == null) {
            conntrack = openConntrack.apply(host);
        }
        if (committer == null) {
            UdpConntrackCleanup cleanup = new UdpConntrackCleanup(conntrack, store::udpPortsHeard, hostAddresses,
                    host.describe());
            committer = new CommitLoop(store, hostAddresses, sockets, cleanup::after, host.describe());
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

    /** Commits {@code batch} and hands each caller its answers. */
    private void process(List<Request> batch) {
        List<PortRequest> asked = new ArrayList<>(batch.size());
        for (Request r : batch) {
            asked.addAll(r.asked());
        }
        List<PortPlanner.Answer> answers = committer.commit(asked, listener);
        int at = 0;
        for (Request r : batch) {
            int n = r.asked().size();
            answer(r, List.copyOf(answers.subList(at, at + n)));
            at += n;
        }
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
            sockets.close();
            committer = null;
        } finally {
            leader.unlock();
        }
    }
}
