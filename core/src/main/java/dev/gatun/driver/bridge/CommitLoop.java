package dev.gatun.driver.bridge;

import dev.gatun.GatunException;
import dev.gatun.RetryableException;
import dev.gatun.driver.DriverStats;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.netlink.GenerationConflictException;
import dev.gatun.sockdiag.BoundSocket;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Commits a batch of requests: reads the store, plans (see {@link PortPlanner}), commits
 * guarded by the read, and on a stale read backs off, reads afresh and plans again, a bounded
 * number of times. A commit whose reply was lost may have been applied: it is planned again
 * from what the store holds then, so that nothing is made or reported twice. Used by one
 * thread at a time.
 */
final class CommitLoop {

    /** What runs after each commit (see {@link UdpConntrackCleanup}): the mappings it moved or removed, and those it added. */
    interface AfterCommit {
        void after(List<PortMapping> flushed, Collection<PortMapping> added);
    }

    /** The host's sockets that hold ports the batch's checking publishes want (see {@link HostSocketQuestion}). */
    interface HeldSockets {
        List<BoundSocket> of(List<CommitRequest> batch, List<InetAddress> localAddresses);
    }

    static final int MAX_ATTEMPTS = 200;
    /** How often one batch is planned again after its commit lost its reply (each loss may take a reply timeout). */
    static final int MAX_LOST_REPLIES = 3;

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    private final MappingStore store;
    private final Supplier<List<InetAddress>> hostAddresses;
    private final HeldSockets heldSockets;
    private final AfterCommit afterCommit;
    private final String hostName;

    /**
     * {@code hostAddresses}: the host's addresses, which a publish on every address must not
     * overlap on one of them; {@code hostName}: the host as errors name it.
     */
    CommitLoop(MappingStore store, Supplier<List<InetAddress>> hostAddresses, HeldSockets heldSockets,
               AfterCommit afterCommit, String hostName) {
        this.store = store;
        this.hostAddresses = hostAddresses;
        this.heldSockets = heldSockets;
        this.afterCommit = afterCommit;
        this.hostName = hostName;
    }

    /**
     * Commits {@code batch} and returns each request's answer, in order, its mappings named by
     * its network; {@code listener} (may be null) hears each commit before this returns.
     */
    List<PortPlanner.Answer> commit(List<CommitRequest> batch, PortListener listener) {
        List<InetAddress> addressesFirst = anyWildcard(batch) ? hostAddresses.get() : List.of();
        // Asked once: a retry after a stale read is about gatun's maps, not the host's sockets.
        // Asked only if a plan needs it: a key gatun holds already (a replace, a publish again)
        // is gatun's, and no socket changes that.
        Supplier<List<BoundSocket>> held = new AskedOnce(() -> heldSockets.of(batch, addressesFirst));
        List<BridgeRules> networks = networkEntries(batch);
        // The answers, UDP flushes and adds of an attempt whose commit lost its reply: it may have been applied.
        List<PortPlanner.Answer> lost = null;
        List<PortMapping> lostFlushes = List.of();
        List<PortMapping> lostAdds = List.of();
        int lostReplies = 0;
        for (int attempt = 1; ; attempt++) {
            List<InetAddress> localAddresses = attempt == 1 ? addressesFirst
                    : anyWildcard(batch) ? hostAddresses.get() : List.of();
            MappingStore.View view = store.begin();
            PortPlanner.BatchPlan plan = PortPlanner.plan(view, batch, localAddresses, held, hostName);
            List<PortPlanner.Answer> answers = lost == null ? plan.answers()
                    : afterLostReply(batch, plan.answers(), lost);
            List<PortMapping> flushes = new ArrayList<>(plan.flush());
            flushes.addAll(lostFlushes);
            List<PortMapping> adds = new ArrayList<>(plan.add());
            adds.addAll(lostAdds);
            try {
                if (plan.changes() || !networks.isEmpty()) {
                    view.commit(plan.delete(), plan.add(), networks);
                } else {
                    view.confirm();
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
                DriverStats.committed(batch.size(), attempt - 1 + lostReplies, false);
                return refusedAll(batch, gaveUp);
            } catch (RuntimeException e) {
                if (e instanceof RetryableException r && r.mayHaveApplied() && lostReplies < MAX_LOST_REPLIES) {
                    // A lost reply is not a lost commit: plan again from what the store holds now.
                    // A publish that was applied finds itself in place; an unpublish, its mappings gone.
                    lostReplies++;
                    lost = answers;
                    lostFlushes = flushes;
                    lostAdds = adds;
                    continue;
                }
                if (batch.size() > 1) {
                    // Something in the batch failed in the kernel: find whose by committing them one by one.
                    List<PortPlanner.Answer> one = new ArrayList<>(batch.size());
                    for (CommitRequest r : batch) {
                        one.addAll(commit(List.of(r), listener));
                    }
                    return one;
                }
                DriverStats.committed(batch.size(), attempt - 1, false);
                return refusedAll(batch, e);
            }
            if (plan.changes()) {
                DriverStats.committed(batch.size(), attempt - 1, true);
            }
            List<PortPlanner.Answer> named = nameAndTell(batch, answers, listener);
            afterCommit.after(flushes, adds);
            return named;
        }
    }

    /**
     * After a lost reply, an unpublish that finds its mappings gone (none of all that match, or
     * "not published") is what made them go: it gets the answer of the attempt that lost its reply.
     */
    private static List<PortPlanner.Answer> afterLostReply(List<CommitRequest> batch, List<PortPlanner.Answer> now,
                                                           List<PortPlanner.Answer> lost) {
        List<PortPlanner.Answer> out = new ArrayList<>(now);
        for (int i = 0; i < batch.size(); i++) {
            PortPlanner.Answer a = now.get(i);
            boolean gone = a.mappings() != null ? a.mappings().isEmpty() : a.refused() instanceof NotFoundException;
            if (batch.get(i) instanceof CommitRequest.Unpublish && gone && lost.get(i).mappings() != null) {
                out.set(i, lost.get(i));
            }
        }
        return out;
    }

    private static List<PortPlanner.Answer> refusedAll(List<CommitRequest> batch, RuntimeException e) {
        List<PortPlanner.Answer> out = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            out.add(new PortPlanner.Answer(null, e));
        }
        return out;
    }

    /**
     * Names each answered request's mappings, and tells the listener what they did in the order
     * the batch applied them, which is the kernel's order: the caller holds the store from the
     * commit to here, so the next batch is committed and told after this one.
     */
    private List<PortPlanner.Answer> nameAndTell(List<CommitRequest> batch, List<PortPlanner.Answer> answers,
                                                 PortListener listener) {
        List<PortPlanner.Answer> out = new ArrayList<>(answers.size());
        for (int i = 0; i < batch.size(); i++) {
            PortPlanner.Answer a = answers.get(i);
            if (a.mappings() == null) {
                out.add(a);
                continue;
            }
            CommitRequest r = batch.get(i);
            List<PortMapping> done = Publisher.named(r.network(), a.mappings());
            out.add(new PortPlanner.Answer(done, null, a.replaced()));
            if (listener != null && !a.replaced().isEmpty()) {
                // The owners that lost a key first: a listener keyed by host key then keeps the new one.
                tell(listener, false, a.replaced());
            }
            if (listener != null && !done.isEmpty()) {
                tell(listener, r instanceof CommitRequest.Publish, done);
            }
        }
        return out;
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
            LOG.log(System.Logger.Level.WARNING, "a port listener failed in " + hostName, e);
        }
    }

    /** The network entries the batch's publishes carry (see {@link CommitRequest.Publish}), each once. */
    private static List<BridgeRules> networkEntries(List<CommitRequest> batch) {
        List<BridgeRules> out = List.of();
        for (CommitRequest r : batch) {
            if (r instanceof CommitRequest.Publish p && p.networkEntries() != null && !out.contains(p.networkEntries())) {
                if (out.isEmpty()) {
                    out = new ArrayList<>();
                }
                out.add(p.networkEntries());
            }
        }
        return out;
    }

    /** Whether a publish in the batch binds every host address (so the host's addresses are needed). */
    private static boolean anyWildcard(List<CommitRequest> batch) {
        for (CommitRequest r : batch) {
            if (r instanceof CommitRequest.Publish p) {
                for (Publisher.Wanted w : p.mappings()) {
                    if (w.hostIp() == null) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** How an error names the work of {@code batch}. */
    private String describe(List<CommitRequest> batch) {
        String what = batch.size() > 1 ? batch.size() + " publishes and unpublishes"
                : (batch.getFirst() instanceof CommitRequest.Publish ? "publish to network " : "unpublish in network ")
                        + batch.getFirst().network();
        return what + " in " + hostName;
    }

    private static void backOff(int attempt) {
        long micros = ThreadLocalRandom.current().nextLong(10, 50L * Math.min(attempt, 20) + 20);
        LockSupport.parkNanos(micros * 1000);
    }

    /** The host's sockets, asked at the first need and kept for the rest of the batch's attempts. */
    private static final class AskedOnce implements Supplier<List<BoundSocket>> {
        private final Supplier<List<BoundSocket>> ask;
        private List<BoundSocket> held;

        AskedOnce(Supplier<List<BoundSocket>> ask) {
            this.ask = ask;
        }

        @Override
        public List<BoundSocket> get() {
            if (held == null) {
                held = ask.get();
            }
            return held;
        }
    }
}
