package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;
import dev.gatun.InetText;
import dev.gatun.sockdiag.BoundSocket;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a batch of requests changes, judged against one reading of the mapping store: a host
 * port held by another owner, on the same key or overlapping it (every address against one
 * address), or by a socket of the host, refuses its request; a request's changes count for the
 * requests after it in the batch. It asks nothing but the view and, only for a key that is not
 * gatun's yet, the host's sockets; a refused request changes nothing. After a stale read the caller plans again on a fresh view.
 */
final class PortPlanner {

    /**
     * One request's answer: its mappings, or why it was refused; {@code replaced}, the mappings
     * of other owners a replacing publish took the keys of.
     */
    record Answer(List<PortMapping> mappings, RuntimeException refused, List<PortMapping> replaced) {
        Answer(List<PortMapping> mappings, RuntimeException refused) {
            this(mappings, refused, List.of());
        }
    }

    /**
     * What a batch adds and deletes, the mappings whose UDP conntrack entries go after it, and
     * each request's answer. {@code changes}: whether any request changes something, even when
     * the batch's changes cancel out (its commit still proves the read was current).
     */
    record BatchPlan(Collection<PortMapping> add, Collection<PortMapping> delete, List<PortMapping> flush,
                     List<Answer> answers, boolean changes) {}

    /** What one request adds, deletes and returns, in order. */
    private static final class Plan {
        final List<PortMapping> add;
        final List<PortMapping> delete = new ArrayList<>();
        final List<PortMapping> flush = new ArrayList<>();
        final List<PortMapping> result;
        /** Other owners' mappings a replacing publish takes the place of. */
        final List<PortMapping> replaced = new ArrayList<>(0);

        Plan(int size) {
            add = new ArrayList<>(size);
            result = new ArrayList<>(size);
        }

        boolean changes() {
            return !add.isEmpty() || !delete.isEmpty();
        }
    }

    /** The changes of a batch of several requests, by key: a later request's change replaces an earlier one's. */
    private static final class Merged {
        final Map<HostKey, PortMapping> add = new LinkedHashMap<>();
        final Map<HostKey, PortMapping> delete = new LinkedHashMap<>();
        final List<PortMapping> flush = new ArrayList<>();

        /** Adds a request's changes, and marks its keys as taken for the requests after it. */
        void add(Plan plan, Map<HostKey, PortMapping> claimed) {
            for (PortMapping m : plan.delete) {
                HostKey k = m.hostKey();
                if (add.remove(k) == null) {
                    delete.put(k, m);
                }
                claimed.put(k, null);
            }
            for (PortMapping m : plan.add) {
                HostKey k = m.hostKey();
                add.put(k, m);
                claimed.put(k, m);
            }
            flush.addAll(plan.flush);
        }
    }

    private final MappingStore.View view;
    /** Walked by index: an iterator for each mapping would be 100,000 more objects in a bulk publish. */
    private final List<InetAddress> localAddresses;
    /** Asked only when a checking publish wants a key gatun does not hold. */
    private final Supplier<List<BoundSocket>> held;
    private final String hostName;
    /**
     * What the view was asked ahead, in one round trip, in the order {@link #prefetch} asked:
     * planning walks the batch in the same order, so it finds each answer by position.
     */
    private List<Optional<PortMapping>> found = List.of();
    /** The position in {@link #found} of the next key planning asks about. */
    private int next;
    /** Where each request's keys begin in {@link #found}. */
    private final int[] starts;
    /** Keys planned by earlier requests of the batch: the mapping they leave there (null: none). */
    private final Map<HostKey, PortMapping> claimed;

    private PortPlanner(MappingStore.View view, List<InetAddress> localAddresses, Supplier<List<BoundSocket>> held,
                        String hostName, int requests) {
        this.starts = new int[requests];
        this.view = view;
        this.localAddresses = localAddresses;
        this.held = held;
        this.hostName = hostName;
        // A lone request claims nothing from others: no map to keep.
        this.claimed = requests == 1 ? Map.of() : new HashMap<>();
    }

    /**
     * Plans {@code batch} against {@code view}. {@code localAddresses}: the host's addresses, which
     * a port on every address must not overlap (read only when a publish wants every address);
     * {@code held}: the host's sockets on the ports of checking publishes; {@code hostName}: the
     * host as errors name it.
     */
    static BatchPlan plan(MappingStore.View view, List<CommitRequest> batch, List<InetAddress> localAddresses,
                          List<BoundSocket> held, String hostName) {
        return plan(view, batch, localAddresses, () -> held, hostName);
    }

    /** Plans as above, asking {@code held} at most when a checking publish wants a key gatun does not hold. */
    static BatchPlan plan(MappingStore.View view, List<CommitRequest> batch, List<InetAddress> localAddresses,
                          Supplier<List<BoundSocket>> held, String hostName) {
        PortPlanner planner = new PortPlanner(view, localAddresses, held, hostName, batch.size());
        List<List<PortMapping>> wanted = new ArrayList<>(batch.size());
        for (CommitRequest r : batch) {
            wanted.add(r instanceof CommitRequest.Publish p ? mappings(p) : List.of());
        }
        planner.prefetch(batch, wanted);
        List<Answer> answers = new ArrayList<>(batch.size());
        // A lone request's plan is the batch's: nothing to merge (100,000 mappings need no map by key).
        Plan alone = null;
        Merged merged = batch.size() == 1 ? null : new Merged();
        boolean changes = false;
        for (int i = 0; i < batch.size(); i++) {
            CommitRequest r = batch.get(i);
            planner.next = planner.starts[i];
            try {
                Plan plan = r instanceof CommitRequest.Publish p ? planner.publish(p, wanted.get(i))
                        : planner.unpublish(((CommitRequest.Unpublish) r).selection());
                if (merged == null) {
                    alone = plan;
                } else {
                    merged.add(plan, planner.claimed);
                }
                changes |= plan.changes();
                answers.add(new Answer(plan.result, null, plan.replaced));
            } catch (InvalidInputException | ConflictException e) {
                answers.add(new Answer(null, e));
            }
        }
        if (merged != null) {
            return new BatchPlan(merged.add.values(), merged.delete.values(), merged.flush, answers, changes);
        }
        return alone == null ? new BatchPlan(List.of(), List.of(), List.of(), answers, false)
                : new BatchPlan(alone.add, alone.delete, alone.flush, answers, changes);
    }

    /** The mappings a publish makes, before they carry a network. */
    private static List<PortMapping> mappings(CommitRequest.Publish p) {
        List<PortMapping> out = new ArrayList<>(p.mappings().size());
        for (Publisher.Wanted w : p.mappings()) {
            out.add(new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), w.containerPort(),
                    p.owner()));
        }
        return out;
    }

    /**
     * Reads every key the batch will ask about in one go: for each publish, each mapping's own
     * key followed by the keys that would overlap it; an unpublish's keys. The store ignores a
     * key's network, owner and container port, so a publish's own mappings serve as their keys.
     * A key asked twice in one batch (two requests for one port) is looked up twice.
     */
    private void prefetch(List<CommitRequest> batch, List<List<PortMapping>> wanted) {
        List<PortMapping> asked = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            starts[i] = asked.size();
            if (batch.get(i) instanceof CommitRequest.Publish) {
                for (PortMapping m : wanted.get(i)) {
                    asked.add(m);
                    if (m.hostIp() != null) {
                        asked.add(new PortMapping(null, m.protocol(), null, m.hostPort(), m.containerIp(), 0, null));
                        continue;
                    }
                    for (int k = 0; k < localAddresses.size(); k++) {
                        InetAddress a = localAddresses.get(k);
                        if (sameFamily(a, m)) {
                            asked.add(new PortMapping(null, m.protocol(), a, m.hostPort(), m.containerIp(), 0, null));
                        }
                    }
                }
            } else if (batch.get(i) instanceof CommitRequest.Unpublish u && u.selection().keys() != null) {
                for (Publisher.Wanted w : u.selection().keys()) {
                    asked.add(new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), 0, null));
                }
            }
        }
        found = asked.isEmpty() ? List.of() : view.getAll(asked);
    }

    /** Whether host address {@code a} is of {@code m}'s family. */
    private static boolean sameFamily(InetAddress a, PortMapping m) {
        return (a instanceof Inet4Address) == (m.containerIp() instanceof Inet4Address);
    }

    private Plan publish(CommitRequest.Publish p, List<PortMapping> wanted) {
        Plan plan = new Plan(wanted.size());
        RequestKeys named = wanted.size() > 1 ? new RequestKeys() : null;
        for (PortMapping m : wanted) {
            if (named != null && !named.add(m)) {
                throw new InvalidInputException("host port " + m.describeHost() + " is published twice in one request");
            }
            Optional<PortMapping> existing = current(m, m.hostIp());
            if (existing.isPresent()) {
                PortMapping old = existing.get();
                boolean replacing = !old.owner().equals(p.owner());
                if (replacing && p.replace() == CommitRequest.Replace.NO) {
                    throw held(m, old);
                }
                if (!replacing && sameTarget(old, m)) {
                    plan.result.add(old);
                    skipOverlaps(m);
                    continue;
                }
                plan.delete.add(old);
                if (replacing) {
                    plan.replaced.add(old);
                }
                if (!replacing || p.replace() == CommitRequest.Replace.DELETING_UDP_FLOWS) {
                    plan.flush.add(old);
                }
            } else if (p.checkHost()) {
                // A port gatun publishes already is gatun's: only a new one can take a service's traffic.
                checkHostSockets(m, p.engineSockets());
            }
            checkOverlaps(m);
            plan.add.add(m);
            plan.result.add(m);
        }
        return plan;
    }

    /**
     * A port on every address and the same port on one of the host's addresses must have the
     * same owner: refuses {@code m} when another owner holds one of the keys overlapping it.
     */
    private void checkOverlaps(PortMapping m) {
        if (m.hostIp() != null) {
            checkOverlap(m, null);
            return;
        }
        for (int i = 0; i < localAddresses.size(); i++) {
            InetAddress a = localAddresses.get(i);
            if (sameFamily(a, m)) {
                checkOverlap(m, a);
            }
        }
    }

    private void checkOverlap(PortMapping m, InetAddress hostIp) {
        Optional<PortMapping> o = current(m, hostIp);
        if (o.isPresent() && !o.get().owner().equals(m.owner())) {
            throw held(m, o.get());
        }
    }

    /** Passes over the answers to {@code m}'s overlapping keys, which a mapping already in place needs not check. */
    private void skipOverlaps(PortMapping m) {
        if (m.hostIp() != null) {
            next++;
            return;
        }
        for (int i = 0; i < localAddresses.size(); i++) {
            InetAddress a = localAddresses.get(i);
            if (sameFamily(a, m)) {
                next++;
            }
        }
    }

    /**
     * Refuses a host port that a socket of the host holds, naming the socket (its process is
     * named later), unless the socket is one of the engine's own reservations.
     */
    private void checkHostSockets(PortMapping m, Set<Long> engineSockets) {
        for (BoundSocket s : held.get()) {
            if (s.protocol() == m.protocol().number() && s.port() == m.hostPort() && !engineSockets.contains(s.inode())
                    && s.holds(m.containerIp() instanceof Inet4Address, m.hostIp())) {
                throw new HostPortInUseException(m.describeHost(), hostName, s);
            }
        }
    }

    private Plan unpublish(Publisher.Selection s) {
        Plan plan = new Plan(0);
        if (s.keys() == null) {
            for (PortMapping m : view.all()) {
                HostKey k = m.hostKey();
                if (claimed.containsKey(k)) {
                    PortMapping now = claimed.get(k);
                    if (now == null || !s.all().test(now)) {
                        continue;
                    }
                    m = now;
                }
                if (s.all().test(m)) {
                    plan.delete.add(m);
                    plan.flush.add(m);
                    plan.result.add(m);
                }
            }
            return plan;
        }
        for (Publisher.Wanted w : s.keys()) {
            PortMapping wanted = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(),
                    w.containerPort(), s.owner());
            PortMapping old = current(wanted, wanted.hostIp()).orElseThrow(() -> new NotFoundException(
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
            plan.delete.add(old);
            plan.flush.add(old);
            plan.result.add(old);
        }
        return plan;
    }

    /**
     * The mapping on {@code m}'s family, protocol and port and on {@code hostIp} (null: every
     * address): as planned earlier in this batch, else as read ahead. Takes the next answer read
     * ahead, so it is called in the order {@link #prefetch} asked.
     */
    private Optional<PortMapping> current(PortMapping m, InetAddress hostIp) {
        Optional<PortMapping> read = found.get(next++);
        if (claimed.isEmpty()) {
            return read;
        }
        HostKey key = new HostKey(m.containerIp() instanceof Inet4Address, hostIp, m.protocol(), m.hostPort());
        return claimed.containsKey(key) ? Optional.ofNullable(claimed.get(key)) : read;
    }

    private static ConflictException held(PortMapping wanted, PortMapping holder) {
        return new ConflictException("host port " + wanted.describeHost() + " is already published by owner "
                + holder.owner() + " (to " + InetText.of(holder.containerIp()) + ":" + holder.containerPort() + ")");
    }

    private static boolean sameTarget(PortMapping a, PortMapping b) {
        return a.containerIp().equals(b.containerIp()) && a.containerPort() == b.containerPort();
    }
}
