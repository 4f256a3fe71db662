package dev.gatun.rtnl;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netns.NetworkNamespace;

/**
 * Tells whether a namespace's links or addresses changed, from the kernel's own announcements:
 * a socket subscribed to the link and address groups, read without waiting. A cache of links
 * or addresses stays exact for the price of one system call per use, instead of a round trip
 * or a timeout.
 */
public final class LinkChanges implements AutoCloseable {

    /** Enough for a burst of announcements; beyond it the overrun itself says "changed". */
    private static final int QUEUE_BYTES = 64 * 1024;
    /** Datagrams one {@link #version()} reads at most: more than a full queue holds. */
    private static final int MAX_READS = 1024;

    private final NetlinkSocket socket;
    private long version;
    private long overruns;

    private LinkChanges(NetlinkSocket socket) {
        this.socket = socket;
    }

    /** Starts watching; changes made from now on move {@link #version()}. */
    public static LinkChanges watch(NetworkNamespace namespace) {
        return watch(namespace, QUEUE_BYTES);
    }

    /**
     * {@link #watch(NetworkNamespace)} with a kernel queue of {@code queueBytes}: tests make it
     * small to overrun it for sure.
     */
    public static LinkChanges watch(NetworkNamespace namespace, int queueBytes) {
        NetlinkSocket socket = NetlinkSocket.subscribe(NetlinkProtocol.ROUTE, namespace,
                kernel_h.RTNLGRP_LINK, kernel_h.RTNLGRP_IPV4_IFADDR, kernel_h.RTNLGRP_IPV6_IFADDR);
        try {
            socket.setReceiveBufferBytes(queueBytes);
        } catch (RuntimeException e) {
            socket.close();
            throw e;
        }
        return new LinkChanges(socket);
    }

    /**
     * A number that grows whenever a link or address was added, changed or removed since the
     * previous call, or when the kernel dropped announcements (then a change must be assumed).
     * Read it before reading what it guards, so a change in between is not missed.
     */
    public synchronized long version() {
        boolean changed = false;
        // Drains what is queued. A flood can refill the queue as fast as it is read; after a
        // queue's worth of datagrams the answer is "changed" anyway, and what is still queued
        // moves the version again at the next call, which is only a re-read too many.
        for (int read = 0; read < MAX_READS; read++) {
            switch (socket.pollNotifications(m -> { })) {
                case TIMEOUT -> {
                    return changed ? ++version : version;
                }
                case MESSAGES -> changed = true;
                case OVERRUN -> {
                    // ENOBUFS: the kernel dropped announcements, so any link or address may have changed.
                    overruns++;
                    changed = true;
                }
            }
        }
        return ++version;
    }

    /** How many times the kernel reported that it dropped announcements (ENOBUFS), so far. */
    public synchronized long overruns() {
        return overruns;
    }

    @Override
    public void close() {
        socket.close();
    }
}
