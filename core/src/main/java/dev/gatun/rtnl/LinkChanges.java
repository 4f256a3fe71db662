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

    private final NetlinkSocket socket;
    private long version;

    private LinkChanges(NetlinkSocket socket) {
        this.socket = socket;
    }

    /** Starts watching; changes made from now on move {@link #version()}. */
    public static LinkChanges watch(NetworkNamespace namespace) {
        NetlinkSocket socket = NetlinkSocket.subscribe(NetlinkProtocol.ROUTE, namespace,
                kernel_h.RTNLGRP_LINK, kernel_h.RTNLGRP_IPV4_IFADDR, kernel_h.RTNLGRP_IPV6_IFADDR);
        try {
            socket.setReceiveBufferBytes(QUEUE_BYTES);
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
        for (;;) {
            switch (socket.pollNotifications(m -> { })) {
                case TIMEOUT -> {
                    return version;
                }
                case MESSAGES, OVERRUN -> version++;
            }
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
