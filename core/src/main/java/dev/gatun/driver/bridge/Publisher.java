package dev.gatun.driver.bridge;

import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;
import dev.gatun.sockdiag.SocketOwners;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Publishes and unpublishes port mappings: turns each call into a {@link CommitRequest} (asking
 * the host's sockets which an engine holds, on the caller's thread), has it committed with
 * whatever else is waiting ({@link GroupCommit}, {@link CommitLoop}: one transaction, guarded by
 * what it read), and hands back its own answer; one request's conflict never fails another's.
 * It owns what the commits use (the store, the conntrack socket, the host's sockets), opened at
 * the first commit and used by one thread at a time, so libnftnl objects are never shared. A
 * {@link PortListener} is told of each commit under the same lock, so in commit order.
 */
final class Publisher implements AutoCloseable {

    /** One mapping to make, before it has an owner. */
    record Wanted(Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp, int containerPort) {

        /** Each host port of {@code ports} to {@code containerIp}; a host address of the other family is refused. */
        static List<Wanted> of(InetAddress containerIp, List<PortSpec> ports) {
            boolean v4 = containerIp instanceof Inet4Address;
            List<Wanted> out = new ArrayList<>();
            for (PortSpec p : ports) {
                if (p.hostIp() != null && (p.hostIp() instanceof Inet4Address) != v4) {
                    throw new InvalidInputException("host address " + InetText.of(p.hostIp()) + " in " + p
                            + " is not of the family of container address " + InetText.of(containerIp));
                }
                // 0.0.0.0 and :: mean every address, as with Docker.
                InetAddress hostIp = p.hostIp() != null && p.hostIp().isAnyLocalAddress() ? null : p.hostIp();
                for (int[] pair : p.pairs()) {
                    out.add(new Wanted(p.protocol(), hostIp, pair[0], containerIp, pair[1]));
                }
            }
            return out;
        }
    }

    /** Which mappings an unpublish removes: by host port keys, or all matching a filter. */
    record Selection(InetAddress containerIp, List<Wanted> keys, String owner, Predicate<PortMapping> all) {

        /** What an unpublish names: the given ports, or without any, all of the owner's to the address. */
        static Selection of(InetAddress containerIp, List<PortSpec> ports, String owner) {
            String who = OwnerNames.check(PortMapping.ownerOr(owner, containerIp));
            return ports.isEmpty()
                    ? new Selection(containerIp, null, who, m -> m.containerIp().equals(containerIp) && m.owner().equals(who))
                    : new Selection(containerIp, Wanted.of(containerIp, ports), who, null);
        }

        /** Every mapping to one of {@code addresses}, whoever owns it. */
        static Selection toAny(Predicate<InetAddress> addresses) {
            return new Selection(null, null, null, m -> addresses.test(m.containerIp()));
        }
    }

    private final NetworkNamespace host;
    private final Firewall firewall;
    /** Queues callers' requests and commits them in batches, one thread at a time. */
    private final GroupCommit group = new GroupCommit(this::commit);
    private MappingStore store;
    private Conntrack conntrack;
    /** The host's sockets, asked at the first publish that checks its ports. */
    private final HostSocketQuestion sockets;
    /** Made once the store and conntrack are open; used under the leader lock only. */
    private CommitLoop committer;
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
        return awaitPublish(network, mappings, owner, check, CommitRequest.Replace.NO).mappings();
    }

    /**
     * {@link #publish(String, List, String, HostPortCheck)}, with the network's entries added in
     * the same transaction where they are not there yet (see {@link Firewall#entriesWithMappings}),
     * also when every port is refused.
     */
    List<PortMapping> publishWithEntries(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                         BridgeRules networkEntries) {
        return awaitOne(publishRequest(network, mappings, owner, check, CommitRequest.Replace.NO, networkEntries)).mappings();
    }

    /**
     * Publishes as {@link #publish(String, List, String, HostPortCheck)}, taking every key another
     * owner holds exactly (same family, address, protocol and port) in the same transaction;
     * a key that only overlaps another owner's stays a conflict.
     */
    Replacement replace(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                        boolean keepUdpFlows) {
        CommitRequest.Replace how = keepUdpFlows ? CommitRequest.Replace.KEEPING_UDP_FLOWS
                : CommitRequest.Replace.DELETING_UDP_FLOWS;
        PortPlanner.Answer a = awaitPublish(network, mappings, owner, check, how);
        return new Replacement(a.mappings(), a.replaced());
    }

    private PortPlanner.Answer awaitPublish(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                            CommitRequest.Replace how) {
        return awaitOne(publishRequest(network, mappings, owner, check, how, null));
    }

    private CommitRequest.Publish publishRequest(String network, List<Wanted> mappings, String owner, HostPortCheck check,
                                               CommitRequest.Replace how, BridgeRules networkEntries) {
        List<Wanted> wanted = List.copyOf(mappings);
        Set<Long> engine = check.engineNames().isEmpty() ? Set.of() : engineSockets(network, wanted, owner, check.engineNames());
        return new CommitRequest.Publish(network, wanted, owner, check.asks(), engine, how, networkEntries);
    }

    /** A publish for {@link #together}: as {@link #publish(String, List, String, HostPortCheck)} would send it. */
    CommitRequest publishing(String network, List<Wanted> mappings, String owner, HostPortCheck check) {
        return publishRequest(network, mappings, owner, check, CommitRequest.Replace.NO, null);
    }

    /** An unpublish for {@link #together}: as {@link #unpublish} would send it. */
    static CommitRequest unpublishing(String network, Selection selection) {
        return new CommitRequest.Unpublish(network, selection);
    }

    /**
     * Commits {@code requests} in one batch, so in one transaction unless the kernel refuses it
     * (then one by one, as any batch); each gets its own answer, in order, and one request's
     * refusal, said in its answer, never fails another. A port a process holds is named in the
     * refusal, as for a lone publish.
     */
    List<PortPlanner.Answer> together(List<CommitRequest> requests) {
        List<PortPlanner.Answer> answers = group.await(requests);
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
            question.of(List.of(new CommitRequest.Publish(network, wanted, owner, true)), hostAddresses.get())
                    .forEach(s -> holding.add(s.inode()));
        }
        return SocketOwners.heldBy(holding, engineNames);
    }

    /** Unpublishes mappings of {@code network}, whose name the returned mappings carry. */
    List<PortMapping> unpublish(String network, Selection selection) {
        return awaitOne(new CommitRequest.Unpublish(network, selection)).mappings();
    }

    /** One request's answer; its refusal is thrown. */
    private PortPlanner.Answer awaitOne(CommitRequest asked) {
        PortPlanner.Answer a = group.await(List.of(asked)).getFirst();
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
     * Plans from memory from the next publish on (see {@link FollowedMappingStore}), if the
     * firewall's kernel side sends notifications: the returned consumer must hear every one of
     * them, in order, from before that publish on (memory is read at it). Null where there are
     * none to hear; the store reads, as before.
     */
    Consumer<RulesetEvent> follow() {
        return group.exclusively(() -> {
            group.checkOpen();
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
        });
    }

    /** How often the store read the kernel instead of answering from memory (-1: it keeps no memory). */
    long reads() {
        return group.exclusively(() -> store instanceof FollowedMappingStore f ? f.reads() : -1L);
    }

    /** Sockets for the committing thread of the moment; opened once, used under the lock only. */
    private void open() {
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

    /** One batch, under the leader lock: {@link GroupCommit} checked the driver is open. */
    private List<PortPlanner.Answer> commit(List<CommitRequest> asked) {
        open();
        return committer.commit(asked, listener);
    }

    @Override
    public void close() {
        group.close(() -> {
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
        });
    }
}
