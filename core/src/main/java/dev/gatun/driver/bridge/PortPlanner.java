package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortMapping.HostKey;
import dev.gatun.internal.InetText;
import dev.gatun.sockdiag.BoundSocket;
import dev.gatun.sockdiag.SocketOwners;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a batch of requests changes, judged against one reading of the mapping store: a host
 * port held by another owner, on the same key or overlapping it (every address against one
 * address), or by a socket of the host, refuses its request; a request's changes count for the
 * requests after it in the batch. Pure: it asks nothing but the view, and a refused request
 * changes nothing. After a stale read the caller plans again on a fresh view.
 */
final class PortPlanner {

    /** One request's answer: its mappings, or why it was refused. */
    record Answer(List<PortMapping> mappings, RuntimeException refused) {}

    /**
     * What a batch adds and deletes, the mappings whose UDP conntrack entries go after it, and
     * each request's answer. {@code changes}: whether any request changes something, even when
     * the batch's changes cancel out (its commit still proves the read was current).
     */
    record BatchPlan(Map<HostKey, PortMapping> add, Map<HostKey, PortMapping> delete, List<PortMapping> flush,
                     List<Answer> answers, boolean changes) {}

    /** What one request adds, deletes and returns. */
    private static final class Plan {
        final Map<HostKey, PortMapping> add;
        final Map<HostKey, PortMapping> delete = new LinkedHashMap<>();
        final List<PortMapping> flush = new ArrayList<>();
        final List<PortMapping> result;

        boolean changes() {
            return !add.isEmpty() || !delete.isEmpty();
        }

        Plan(int size) {
            add = LinkedHashMap.newLinkedHashMap(size);
            result = new ArrayList<>(size);
        }

        /** Adds this request's changes to the batch's, and marks its keys as taken for the requests after it. */
        void applyTo(Plan batch, Map<HostKey, PortMapping> claimed) {
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
            batch.flush.addAll(flush);
        }
    }

    private final MappingStore.View view;
    private final List<InetAddress> localAddresses;
    private final List<BoundSocket> held;
    private final String hostName;
    /** What the view was asked ahead, in one round trip, by key. */
    private final Map<HostKey, Optional<PortMapping>> known = new HashMap<>();
    /** Keys planned by earlier requests of the batch: the mapping they leave there (null: none). */
    private final Map<HostKey, PortMapping> claimed;

    private PortPlanner(MappingStore.View view, List<InetAddress> localAddresses, List<BoundSocket> held,
                        String hostName, boolean alone) {
        this.view = view;
        this.localAddresses = localAddresses;
        this.held = held;
        this.hostName = hostName;
        // A lone request claims nothing from others: no map to keep.
        this.claimed = alone ? Map.of() : new HashMap<>();
    }

    /**
     * Plans {@code batch} against {@code view}. {@code localAddresses}: the host's addresses, which
     * a port on every address must not overlap (read only when a publish wants every address);
     * {@code held}: the host's sockets on the ports of checking publishes; {@code hostName}: the
     * host as errors name it.
     */
    static BatchPlan plan(MappingStore.View view, List<PortRequest> batch, List<InetAddress> localAddresses,
                          List<BoundSocket> held, String hostName) {
        PortPlanner planner = new PortPlanner(view, localAddresses, held, hostName, batch.size() == 1);
        List<List<PortMapping>> wanted = new ArrayList<>(batch.size());
        for (PortRequest r : batch) {
            wanted.add(r instanceof PortRequest.Publish p ? mappings(p) : List.of());
        }
        planner.prefetch(batch, wanted);
        List<Answer> answers = new ArrayList<>(batch.size());
        Plan all = null;
        boolean changes = false;
        for (int i = 0; i < batch.size(); i++) {
            PortRequest r = batch.get(i);
            try {
                Plan plan = r instanceof PortRequest.Publish p ? planner.publish(p, wanted.get(i))
                        : planner.unpublish(((PortRequest.Unpublish) r).selection());
                if (batch.size() == 1) {
                    all = plan;
                } else {
                    if (all == null) {
                        all = new Plan(0);
                    }
                    plan.applyTo(all, planner.claimed);
                }
                changes |= plan.changes();
                answers.add(new Answer(plan.result, null));
            } catch (InvalidInputException | ConflictException e) {
                answers.add(new Answer(null, e));
            }
        }
        if (all == null) {
            all = new Plan(0);
        }
        return new BatchPlan(all.add, all.delete, all.flush, answers, changes);
    }

    /** The mappings a publish makes, before they carry a network. */
    private static List<PortMapping> mappings(PortRequest.Publish p) {
        List<PortMapping> out = new ArrayList<>(p.mappings().size());
        for (Publisher.Wanted w : p.mappings()) {
            out.add(new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), w.containerPort(), p.owner()));
        }
        return out;
    }

    /**
     * Reads every key the batch will ask about in one go: a publish's own keys and those that
     * would overlap them, an unpublish's keys. The store ignores a key's network, owner and
     * container port, so a publish's own mappings serve as their keys.
     */
    private void prefetch(List<PortRequest> batch, List<List<PortMapping>> wanted) {
        List<HostKey> ids = new ArrayList<>();
        List<PortMapping> asked = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            if (batch.get(i) instanceof PortRequest.Publish) {
                for (PortMapping m : wanted.get(i)) {
                    ask(m.hostKey(), m, ids, asked);
                    for (HostKey other : overlapping(m)) {
                        ask(other, null, ids, asked);
                    }
                }
            } else if (batch.get(i) instanceof PortRequest.Unpublish u && u.selection().keys() != null) {
                for (Publisher.Wanted w : u.selection().keys()) {
                    PortMapping k = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(), 0, null);
                    ask(k.hostKey(), k, ids, asked);
                }
            }
        }
        List<Optional<PortMapping>> found = asked.isEmpty() ? List.of() : view.getAll(asked);
        for (int i = 0; i < ids.size(); i++) {
            known.put(ids.get(i), found.get(i));
        }
    }

    private void ask(HostKey id, PortMapping probe, List<HostKey> ids, List<PortMapping> asked) {
        if (known.putIfAbsent(id, Optional.empty()) == null) {
            ids.add(id);
            asked.add(probe != null ? probe : probe(id));
        }
    }

    /** A mapping with {@code id}'s key, to ask the store with. */
    private static PortMapping probe(HostKey id) {
        InetAddress family = id.ipv4() ? WILDCARD4 : WILDCARD6;
        return new PortMapping(null, id.protocol(), id.hostIp(), id.hostPort(), family, 0, null);
    }

    private static final InetAddress WILDCARD4 = InetAddress.ofLiteral("0.0.0.0");
    private static final InetAddress WILDCARD6 = InetAddress.ofLiteral("::");

    /**
     * The keys that must have the same owner as {@code m}'s: for a port on every address, that
     * port on each host address of its family; for a port on one address, the port on every address.
     */
    private List<HostKey> overlapping(PortMapping m) {
        boolean v4 = m.containerIp() instanceof Inet4Address;
        if (m.hostIp() != null) {
            return List.of(new HostKey(v4, null, m.protocol(), m.hostPort()));
        }
        List<HostKey> out = new ArrayList<>(localAddresses.size());
        for (InetAddress a : localAddresses) {
            if ((a instanceof Inet4Address) == v4) {
                out.add(new HostKey(v4, a, m.protocol(), m.hostPort()));
            }
        }
        return out;
    }

    private Plan publish(PortRequest.Publish p, List<PortMapping> wanted) {
        Plan plan = new Plan(wanted.size());
        Set<HostKey> inRequest = HashSet.newHashSet(wanted.size());
        for (PortMapping m : wanted) {
            HostKey key = m.hostKey();
            if (!inRequest.add(key)) {
                throw new InvalidInputException("host port " + m.describeHost() + " is published twice in one request");
            }
            Optional<PortMapping> existing = current(key);
            if (existing.isPresent()) {
                PortMapping old = existing.get();
                if (!old.owner().equals(p.owner())) {
                    throw held(m, old);
                }
                if (sameTarget(old, m)) {
                    plan.result.add(old);
                    continue;
                }
                plan.delete.put(key, old);
                plan.flush.add(old);
            } else if (p.checkHost()) {
                // A port gatun publishes already is gatun's: only a new one can take a service's traffic.
                checkHostSockets(m);
            }
            for (HostKey other : overlapping(m)) {
                Optional<PortMapping> o = current(other);
                if (o.isPresent() && !o.get().owner().equals(m.owner())) {
                    throw held(m, o.get());
                }
            }
            plan.add.put(key, m);
            plan.result.add(m);
        }
        return plan;
    }

    /** Refuses a host port that a socket of the host holds, naming it and its process. */
    private void checkHostSockets(PortMapping m) {
        for (BoundSocket s : held) {
            if (s.protocol() == m.protocol().number() && s.port() == m.hostPort()
                    && s.holds(m.containerIp() instanceof Inet4Address, m.hostIp())) {
                String process = SocketOwners.of(Set.of(s.inode())).get(s.inode());
                throw new ConflictException("host port " + m.describeHost() + " is in use on the host in "
                        + hostName + ": " + s.describe(process) + "; publishing it would take that traffic away");
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
                    plan.delete.put(k, m);
                    plan.flush.add(m);
                    plan.result.add(m);
                }
            }
            return plan;
        }
        for (Publisher.Wanted w : s.keys()) {
            PortMapping wanted = new PortMapping(null, w.protocol(), w.hostIp(), w.hostPort(), w.containerIp(),
                    w.containerPort(), s.owner());
            HostKey key = wanted.hostKey();
            PortMapping old = current(key).orElseThrow(() -> new NotFoundException(
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
    private Optional<PortMapping> current(HostKey key) {
        if (claimed.containsKey(key)) {
            return Optional.ofNullable(claimed.get(key));
        }
        Optional<PortMapping> o = known.get(key);
        return o != null ? o : view.get(probe(key));
    }

    private static ConflictException held(PortMapping wanted, PortMapping holder) {
        return new ConflictException("host port " + wanted.describeHost() + " is already published by owner "
                + holder.owner() + " (to " + InetText.of(holder.containerIp()) + ":" + holder.containerPort() + ")");
    }

    private static boolean sameTarget(PortMapping a, PortMapping b) {
        return a.containerIp().equals(b.containerIp()) && a.containerPort() == b.containerPort();
    }
}
