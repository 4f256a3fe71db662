package dev.gatun.nft;

import dev.gatun.nft.value.Family;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netlink.MalformedReplyException;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import static dev.gatun.bindings.internal.libnftnl_h.*;

/**
 * Listens to nftables change notifications (NFNLGRP_NFTABLES) in a namespace and hands each to
 * a listener on a thread of its own, so an embedding can notice when someone else deletes or
 * flushes its objects. Close it to stop.
 */
public final class RulesetMonitor implements AutoCloseable {

    private static final Duration POLL = Duration.ofMillis(200);
    /** After a receive or a listener failed: long enough not to spin on a failure that stays. */
    private static final long FAILURE_PAUSE_MILLIS = 100;

    private final NetlinkSocket socket;
    private final Thread reader;
    private volatile boolean running = true;
    private final AtomicLong overruns = new AtomicLong();

    private RulesetMonitor(NetlinkSocket socket, Consumer<RulesetEvent> listener) {
        this.socket = socket;
        socket.setReceiveTimeout(POLL);
        this.reader = Thread.ofPlatform().daemon().name("gatun-nft-monitor").start(() -> read(listener));
    }

    /** Starts listening; events that happen after this returns are delivered. */
    public static RulesetMonitor start(NetworkNamespace namespace, Consumer<RulesetEvent> listener) {
        return start(namespace, listener, 0);
    }

    /**
     * {@link #start(NetworkNamespace, Consumer)} with a kernel queue of {@code queueBytes} (0:
     * the default of every netlink socket, 4 MiB where the process may raise it). A small queue
     * overruns sooner: tests use it to prove that an overrun leads to a full re-read.
     */
    public static RulesetMonitor start(NetworkNamespace namespace, Consumer<RulesetEvent> listener, int queueBytes) {
        NativeLibraries.requireNftables();
        NetlinkSocket socket = NetlinkSocket.subscribe(NetlinkProtocol.NETFILTER, namespace, kernel_h.NFNLGRP_NFTABLES);
        try {
            if (queueBytes > 0) {
                socket.setReceiveBufferBytes(queueBytes);
            }
            return new RulesetMonitor(socket, listener);
        } catch (RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /**
     * How many times notifications were lost so far: the kernel reported ENOBUFS (the queue was
     * full), or a receive or the listener failed. Each time the listener got an {@code OVERRUN} event.
     */
    public long overruns() {
        return overruns.get();
    }

    /**
     * Hands each transaction's events over when its NEWGEN arrives, which ends every commit and
     * names the committing thread: a listener can then tell its own changes from others'.
     */
    private void read(Consumer<RulesetEvent> listener) {
        List<RulesetEvent> pending = new ArrayList<>();
        while (running) {
            try {
                receive(listener, pending);
            } catch (RuntimeException e) {
                // A receive or the listener failed: events may be lost. Never let the reader die
                // of it (the listener would hear nothing again); say "re-read", pause, go on.
                if (!running) {
                    return;
                }
                pending.clear();
                try {
                    overran(listener);
                } catch (RuntimeException again) {
                    // the listener failed once more; the pause below keeps this from spinning
                }
                try {
                    Thread.sleep(FAILURE_PAUSE_MILLIS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /** Tells the listener that notifications were lost: it must read the whole ruleset again. */
    private void overran(Consumer<RulesetEvent> listener) {
        overruns.incrementAndGet();
        listener.accept(new RulesetEvent(RulesetEvent.Kind.OVERRUN, null, null, null));
    }

    private void receive(Consumer<RulesetEvent> listener, List<RulesetEvent> pending) {
        NetlinkSocket.Receipt r = socket.receiveNotifications(m -> {
            RulesetEvent e = decodeOrOverrun(m);
            if (e == null) {
                return;
            }
            if (e.kind() == RulesetEvent.Kind.NEW_GENERATION) {
                pending.forEach(p -> listener.accept(p.by(e.committer())));
                pending.clear();
                listener.accept(e);
            } else if (pending.isEmpty() || !pending.getLast().equals(e)) {
                // The kernel notifies each element on its own: a commit's run of them in one set is one event.
                pending.add(e);
            }
        });
        if (r == NetlinkSocket.Receipt.OVERRUN) {
            // ENOBUFS: the kernel's queue for this socket was full and it dropped notifications.
            overran(listener);
        }
        if (r != NetlinkSocket.Receipt.MESSAGES && !pending.isEmpty()) {
            // No NEWGEN came (lost, or the overrun took it): deliver them, committer unknown.
            pending.forEach(listener);
            pending.clear();
        }
    }

    private static RulesetEvent decodeOrOverrun(MemorySegment m) {
        try {
            return decode(m);
        } catch (RuntimeException unreadable) {
            // A notification we cannot read still says something changed: re-read, as after an overrun.
            return new RulesetEvent(RulesetEvent.Kind.OVERRUN, null, null, null);
        }
    }

    /** The event a notification stands for, or null for one gatun does not report. */
    static RulesetEvent decode(MemorySegment m) {
        int type = NetlinkMessages.type(m);
        if ((type >> 8) != kernel_h.NFNL_SUBSYS_NFTABLES) {
            return null;
        }
        return switch (type & 0xff) {
            case kernel_h.NFT_MSG_NEWTABLE, kernel_h.NFT_MSG_DELTABLE -> {
                Table t = TableCodec.read(m);
                yield new RulesetEvent((type & 0xff) == kernel_h.NFT_MSG_NEWTABLE ? RulesetEvent.Kind.NEW_TABLE
                        : RulesetEvent.Kind.DELETE_TABLE, t.family(), t.name(), t.name());
            }
            case kernel_h.NFT_MSG_NEWCHAIN, kernel_h.NFT_MSG_DELCHAIN -> {
                Chain c = ChainCodec.read(m);
                yield new RulesetEvent((type & 0xff) == kernel_h.NFT_MSG_NEWCHAIN ? RulesetEvent.Kind.NEW_CHAIN
                        : RulesetEvent.Kind.DELETE_CHAIN, c.family(), c.table(), c.name());
            }
            case kernel_h.NFT_MSG_NEWRULE, kernel_h.NFT_MSG_DELRULE -> {
                Rule r = RuleCodec.readHeader(m);
                yield new RulesetEvent((type & 0xff) == kernel_h.NFT_MSG_NEWRULE ? RulesetEvent.Kind.NEW_RULE
                        : RulesetEvent.Kind.DELETE_RULE, r.family(), r.table(), r.chain());
            }
            // Only the set's family, table and name: a deletion does not carry the whole set.
            case kernel_h.NFT_MSG_NEWSET -> setEvent(m, RulesetEvent.Kind.NEW_SET);
            case kernel_h.NFT_MSG_DELSET -> setEvent(m, RulesetEvent.Kind.DELETE_SET);
            case kernel_h.NFT_MSG_NEWSETELEM -> elementsEvent(m, RulesetEvent.Kind.NEW_ELEMENTS);
            case kernel_h.NFT_MSG_DELSETELEM -> elementsEvent(m, RulesetEvent.Kind.DELETE_ELEMENTS);
            case kernel_h.NFT_MSG_NEWGEN -> newGeneration(m);
            default -> null;
        };
    }

    /** A NEWGEN notification: NFTA_GEN_ID, and NFTA_GEN_PROC_PID (the committing thread's id, 0 if absent). */
    private static RulesetEvent newGeneration(MemorySegment m) {
        int[] idAndPid = {0, 0};
        NetlinkMessages.forEachAttribute(m, NetlinkMessages.HEADER_BYTES + nfgenmsg.sizeof(), (type, payload) -> {
            if (payload.byteSize() == Integer.BYTES && (type == kernel_h.NFTA_GEN_ID || type == kernel_h.NFTA_GEN_PROC_PID)) {
                idAndPid[type == kernel_h.NFTA_GEN_ID ? 0 : 1] = payload.get(NetlinkMessages.NETWORK_INT, 0);
            }
        });
        return RulesetEvent.newGeneration(idAndPid[0], idAndPid[1]);
    }

    private static RulesetEvent setEvent(MemorySegment m, RulesetEvent.Kind kind) {
        MemorySegment s = nftnl_set_alloc();
        try {
            NftReplyCheck.set(m);
            nftnl_set_nlmsg_parse(m, s);
            return new RulesetEvent(kind, Family.of(nftnl_set_get_u32(s, (short) NFTNL_SET_FAMILY)),
                    Native.string(nftnl_set_get_str(s, (short) NFTNL_SET_TABLE)),
                    Native.string(nftnl_set_get_str(s, (short) NFTNL_SET_NAME)));
        } finally {
            nftnl_set_free(s);
        }
    }

    /**
     * The event of an element notification: its family and the table and set it names beside
     * the element, read alone. The kernel sends one notification per element, so a commit of
     * 100,000 elements (a bulk publish, a repair) is 100,000 of them, read while it runs: parsing
     * each with libnftnl built every element for nothing.
     */
    private static RulesetEvent elementsEvent(MemorySegment m, RulesetEvent.Kind kind) {
        MemorySegment header = NetlinkMessages.familyHeader(m, nfgenmsg.sizeof(), "set element");
        String[] tableAndSet = new String[2];
        NetlinkMessages.forEachAttribute(m, NetlinkMessages.HEADER_BYTES + nfgenmsg.sizeof(), (type, payload) -> {
            if (type == kernel_h.NFTA_SET_ELEM_LIST_TABLE) {
                tableAndSet[0] = NetlinkMessages.string(payload);
            } else if (type == kernel_h.NFTA_SET_ELEM_LIST_SET) {
                tableAndSet[1] = NetlinkMessages.string(payload);
            }
        });
        if (tableAndSet[0] == null || tableAndSet[1] == null) {
            throw new MalformedReplyException("a set element notification names no " + (tableAndSet[0] == null ? "table" : "set"));
        }
        return new RulesetEvent(kind, Family.of(Byte.toUnsignedInt(nfgenmsg.nfgen_family(header))), tableAndSet[0], tableAndSet[1]);
    }

    @Override
    public void close() {
        running = false;
        try {
            reader.join(POLL.toMillis() * 10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        socket.close();
    }
}
