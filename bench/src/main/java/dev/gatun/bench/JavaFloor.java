package dev.gatun.bench;

import dev.gatun.bindings.internal.CallState;
import dev.gatun.bindings.internal.ifaddrmsg;
import dev.gatun.bindings.internal.inet_diag_req_v2;
import dev.gatun.bindings.internal.inet_diag_sockid;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.libmnl_h;
import dev.gatun.bindings.internal.libnftnl_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The C floor's publish (bench/src/main/c/publish_ref.c) written again in Java: the same libmnl
 * and libnftnl calls in the same order, through gatun's generated bindings, as straight-line
 * code with buffers made once. It splits gatun's distance from the C floor in two, in the same
 * run: this over C is what the JVM and the FFM passage cost; gatun over this is gatun's own code.
 */
final class JavaFloor implements Worker.Tool {

    private static final ValueLayout.OfInt NETWORK_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort NETWORK_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final int MAX_ADDRESSES = 64;
    private static final int ATTRIBUTE_HEADER = 4;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer = arena.allocate(1 << 16, 8);
    private final MemorySegment requests = arena.allocate(1 << 15, 8);
    private final MemorySegment batch = arena.allocate(4096, 8);
    private final MemorySegment notes = arena.allocate(8192);
    private final MemorySegment key = arena.allocate(8);
    private final MemorySegment data = arena.allocate(8);
    private final MemorySegment hostKey = arena.allocate(12);
    private final MemorySegment callState = CallState.allocate(arena);
    private final MemorySegment table = arena.allocateFrom("gatun");
    private final MemorySegment ports = arena.allocateFrom("ports4");
    private final MemorySegment hostIp = arena.allocateFrom("hostip4");
    private final MemorySegment owner = arena.allocateFrom("bench");
    private final int container;
    private final int[] addresses = new int[MAX_ADDRESSES];
    private int addressCount;
    private boolean hostKnown;
    private int seq = (int) (System.currentTimeMillis() / 1000);
    private final MemorySegment nft;
    private final MemorySegment route;
    private final MemorySegment watch;
    private final MemorySegment diag;
    private final MemorySegment diagRequest = arena.allocate((MAX_ADDRESSES + 1) * (nlmsghdr.sizeof() + inet_diag_req_v2.sizeof()), 8);

    JavaFloor(NetworkNamespace ns) {
        container = ByteBuffer.wrap(InetAddress.ofLiteral(Subjects.CONTAINER).getAddress()).getInt();
        MemorySegment[] sockets = ns.call(() -> new MemorySegment[] {
                open(kernel_h.NETLINK_NETFILTER, 0), open(kernel_h.NETLINK_ROUTE, 0),
                open(kernel_h.NETLINK_ROUTE, kernel_h.RTMGRP_LINK | kernel_h.RTMGRP_IPV4_IFADDR | kernel_h.RTMGRP_IPV6_IFADDR),
                open(kernel_h.NETLINK_SOCK_DIAG, 0)});
        nft = sockets[0];
        route = sockets[1];
        watch = sockets[2];
        diag = sockets[3];
    }

    private MemorySegment open(int protocol, int groups) {
        MemorySegment socket = libmnl_h.mnl_socket_open(callState, protocol);
        if (socket.address() == 0 || libmnl_h.mnl_socket_bind(callState, socket, groups, libmnl_h.MNL_SOCKET_AUTOPID) < 0) {
            throw new IllegalStateException("java-floor: cannot open netlink protocol " + protocol
                    + ": errno " + CallState.errno(callState));
        }
        return socket;
    }

    /** Ports published again to the same container change nothing and are accepted: the warm-up needs no cleanup. */
    @Override
    public void warmUpStep(int i, int width) {
        publishOne(60000 + i);
    }

    /** One port per publish, as the C program does. */
    @Override
    public long publish(int first, int width) {
        if (width != 1) {
            throw new IllegalArgumentException("java-floor publishes one port at a time, not " + width);
        }
        long t = System.nanoTime();
        publishOne(first);
        return (System.nanoTime() - t) / 1000;
    }

    private void publishOne(int port) {
        key.fill((byte) 0);
        key.set(ValueLayout.JAVA_BYTE, 0, (byte) libc_h.IPPROTO_TCP);
        key.set(NETWORK_SHORT, 4, (short) port);
        data.fill((byte) 0);
        data.set(NETWORK_INT, 0, container);
        data.set(NETWORK_SHORT, 4, (short) port);

        if (hostChanged()) {
            dumpAddresses();
        }
        MemorySegment getGen = libnftnl_h.nftnl_nlmsg_build_hdr(requests, (short) kernel_h.NFT_MSG_GETGEN,
                (short) libc_h.AF_UNSPEC, (short) 0, ++seq).reinterpret(nlmsghdr.sizeof());
        long end = align(nlmsghdr.nlmsg_len(getGen));
        end = putLookup(end, ports, key, 8);
        for (int i = 0; i < addressCount; i++) {
            hostKey.fill((byte) 0);
            hostKey.set(NETWORK_INT, 0, addresses[i]);
            MemorySegment.copy(key, 0, hostKey, 4, 8);
            end = putLookup(end, hostIp, hostKey, 12);
        }
        int generation = lookups(end, addressCount + 2);
        // The key is new: only now does a socket of the host matter.
        if (portHeld(port)) {
            throw new IllegalStateException("java-floor: host port " + port + " is in use on the host");
        }

        MemorySegment b = libmnl_h.mnl_nlmsg_batch_start(batch, batch.byteSize());
        MemorySegment begin = libnftnl_h.nftnl_batch_begin(libmnl_h.mnl_nlmsg_batch_current(b), ++seq);
        libmnl_h.mnl_attr_put_u32(begin, (short) kernel_h.NFNL_BATCH_GENID, Integer.reverseBytes(generation));
        libmnl_h.mnl_nlmsg_batch_next(b);
        MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(libmnl_h.mnl_nlmsg_batch_current(b),
                (short) kernel_h.NFT_MSG_NEWSETELEM, (short) kernel_h.NFPROTO_INET,
                (short) (kernel_h.NLM_F_CREATE | kernel_h.NLM_F_ACK), ++seq);
        libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_TABLE, table);
        libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_SET, ports);
        MemorySegment list = libmnl_h.mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS);
        MemorySegment item = libmnl_h.mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_LIST_ELEM);
        MemorySegment e = libnftnl_h.nftnl_set_elem_alloc();
        libnftnl_h.nftnl_set_elem_set(e, (short) libnftnl_h.NFTNL_SET_ELEM_KEY, key, 8);
        libnftnl_h.nftnl_set_elem_set(e, (short) libnftnl_h.NFTNL_SET_ELEM_DATA, data, 8);
        MemorySegment udata = libnftnl_h.nftnl_udata_buf_alloc(libnftnl_h.NFTNL_UDATA_COMMENT_MAXLEN + 2);
        libnftnl_h.nftnl_udata_put_strz(udata, (byte) libnftnl_h.NFTNL_UDATA_SET_ELEM_COMMENT, owner);
        libnftnl_h.nftnl_set_elem_set(e, (short) libnftnl_h.NFTNL_SET_ELEM_USERDATA, libnftnl_h.nftnl_udata_buf_data(udata),
                libnftnl_h.nftnl_udata_buf_len(udata));
        libnftnl_h.nftnl_udata_buf_free(udata);
        libnftnl_h.nftnl_set_elem_nlmsg_build_payload(nlh, e);
        libnftnl_h.nftnl_set_elem_free(e);
        libmnl_h.mnl_attr_nest_end(nlh, item);
        libmnl_h.mnl_attr_nest_end(nlh, list);
        libmnl_h.mnl_nlmsg_batch_next(b);
        libnftnl_h.nftnl_batch_end(libmnl_h.mnl_nlmsg_batch_current(b), ++seq);
        libmnl_h.mnl_nlmsg_batch_next(b);
        send(nft, libmnl_h.mnl_nlmsg_batch_head(b), libmnl_h.mnl_nlmsg_batch_size(b), "the batch");
        libmnl_h.mnl_nlmsg_batch_stop(b);
        awaitAck();
    }

    /**
     * Whether a TCP socket of the host would take a connection to the port on 0.0.0.0 or a local
     * address: one exact SOCK_DIAG_BY_FAMILY lookup each, all in one datagram, as gatun asks
     * before it publishes a new key. None asks for an ACK: each answers with the socket, or with ENOENT.
     */
    private boolean portHeld(int port) {
        int per = (int) (nlmsghdr.sizeof() + inet_diag_req_v2.sizeof());
        int first = seq + 1;
        diagRequest.fill((byte) 0);
        for (int i = -1; i < addressCount; i++) {
            MemorySegment nlh = diagRequest.asSlice((long) (i + 1) * per, per);
            nlmsghdr.nlmsg_len(nlh, per);
            nlmsghdr.nlmsg_type(nlh, (short) kernel_h.SOCK_DIAG_BY_FAMILY);
            nlmsghdr.nlmsg_flags(nlh, (short) kernel_h.NLM_F_REQUEST);
            nlmsghdr.nlmsg_seq(nlh, ++seq);
            MemorySegment r = nlh.asSlice(nlmsghdr.sizeof());
            inet_diag_req_v2.sdiag_family(r, (byte) libc_h.AF_INET);
            inet_diag_req_v2.sdiag_protocol(r, (byte) libc_h.IPPROTO_TCP);
            inet_diag_req_v2.idiag_states(r, 1 << libc_h.TCP_LISTEN);
            MemorySegment id = r.asSlice(inet_diag_req_v2.id$OFFSET, inet_diag_sockid.sizeof());
            id.set(ValueLayout.JAVA_INT, inet_diag_sockid.idiag_cookie$OFFSET, kernel_h.INET_DIAG_NOCOOKIE);
            id.set(ValueLayout.JAVA_INT, inet_diag_sockid.idiag_cookie$OFFSET + 4, kernel_h.INET_DIAG_NOCOOKIE);
            // TCP looks the socket up by its source fields as the local end.
            id.set(NETWORK_INT, inet_diag_sockid.idiag_src$OFFSET, i < 0 ? 0 : addresses[i]);
            id.set(NETWORK_SHORT, inet_diag_sockid.idiag_sport$OFFSET, (short) port);
        }
        send(diag, diagRequest, (long) (addressCount + 1) * per, "the sock_diag lookups");
        int found = 0;
        for (int answered = 0; answered < addressCount + 1; ) {
            long n = receive(diag);
            for (long at = 0; at + nlmsghdr.sizeof() <= n; ) {
                int length = buffer.get(ValueLayout.JAVA_INT, at);
                short type = buffer.get(ValueLayout.JAVA_SHORT, at + 4);
                int sequence = buffer.get(ValueLayout.JAVA_INT, at + 8);
                if (sequence >= first && sequence <= seq) {
                    answered++;
                    if (type == kernel_h.NLMSG_ERROR) {
                        int error = buffer.get(ValueLayout.JAVA_INT, at + nlmsghdr.sizeof());
                        if (error != 0 && error != -libc_h.ENOENT) {
                            throw new IllegalStateException("java-floor: a sock_diag lookup failed: errno " + -error);
                        }
                    } else if (type == kernel_h.SOCK_DIAG_BY_FAMILY) {
                        found++;
                    }
                }
                at += align(length);
            }
        }
        return found > 0;
    }

    /** Whether links or addresses changed since the last look: drains the subscribed socket without waiting. */
    private boolean hostChanged() {
        boolean changed = !hostKnown;
        hostKnown = true;
        while (libc_h.recv(callState, libmnl_h.mnl_socket_get_fd(watch), notes, notes.byteSize(), libc_h.MSG_DONTWAIT) > 0) {
            changed = true;
        }
        return changed;
    }

    /** The host's IPv4 addresses (RTM_GETADDR dump), for the address-bound lookups. */
    private void dumpAddresses() {
        MemorySegment nlh = requests.asSlice(0, nlmsghdr.sizeof() + ifaddrmsg.sizeof());
        nlh.fill((byte) 0);
        nlmsghdr.nlmsg_len(nlh, (int) nlh.byteSize());
        nlmsghdr.nlmsg_type(nlh, (short) kernel_h.RTM_GETADDR);
        nlmsghdr.nlmsg_flags(nlh, (short) (kernel_h.NLM_F_REQUEST | kernel_h.NLM_F_DUMP));
        nlmsghdr.nlmsg_seq(nlh, ++seq);
        addressCount = 0;
        send(route, nlh, nlh.byteSize(), "the address dump");
        for (;;) {
            long n = receive(route);
            for (long at = 0; at + nlmsghdr.sizeof() <= n; ) {
                MemorySegment m = buffer.asSlice(at, nlmsghdr.nlmsg_len(buffer.asSlice(at)));
                int type = nlmsghdr.nlmsg_type(m);
                if (type == kernel_h.NLMSG_DONE) {
                    return;
                }
                if (type == kernel_h.NLMSG_ERROR) {
                    throw new IllegalStateException("java-floor: the address dump failed: " + m.get(ValueLayout.JAVA_INT, nlmsghdr.sizeof()));
                }
                long payload = nlmsghdr.sizeof();
                if (ifaddrmsg.ifa_family(m.asSlice(payload)) == libc_h.AF_INET) {
                    for (long a = payload + align(ifaddrmsg.sizeof()); a + ATTRIBUTE_HEADER <= m.byteSize(); ) {
                        int length = Short.toUnsignedInt(m.get(ValueLayout.JAVA_SHORT_UNALIGNED, a));
                        if (m.get(ValueLayout.JAVA_SHORT_UNALIGNED, a + 2) == kernel_h.IFA_LOCAL && addressCount < MAX_ADDRESSES) {
                            addresses[addressCount++] = m.get(NETWORK_INT, a + ATTRIBUTE_HEADER);
                        }
                        a += align(Math.max(length, ATTRIBUTE_HEADER));
                    }
                }
                at += align(m.byteSize());
            }
        }
    }

    /** Appends a GETSETELEM for one key at {@code at}; a missing element is the expected answer (ENOENT). */
    private long putLookup(long at, MemorySegment set, MemorySegment k, int length) {
        MemorySegment nlh = libnftnl_h.nftnl_nlmsg_build_hdr(requests.asSlice(at), (short) kernel_h.NFT_MSG_GETSETELEM,
                (short) kernel_h.NFPROTO_INET, (short) 0, ++seq).reinterpret(requests.byteSize() - at);
        libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_TABLE, table);
        libmnl_h.mnl_attr_put_strz(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_SET, set);
        MemorySegment list = libmnl_h.mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_SET_ELEM_LIST_ELEMENTS);
        MemorySegment item = libmnl_h.mnl_attr_nest_start(nlh, (short) kernel_h.NFTA_LIST_ELEM);
        MemorySegment e = libnftnl_h.nftnl_set_elem_alloc();
        libnftnl_h.nftnl_set_elem_set(e, (short) libnftnl_h.NFTNL_SET_ELEM_KEY, k, length);
        libnftnl_h.nftnl_set_elem_nlmsg_build_payload(nlh, e);
        libnftnl_h.nftnl_set_elem_free(e);
        libmnl_h.mnl_attr_nest_end(nlh, item);
        libmnl_h.mnl_attr_nest_end(nlh, list);
        return at + align(nlmsghdr.nlmsg_len(nlh));
    }

    /**
     * Sends GETGEN and the lookups in one datagram, none asking for an ACK, and reads until each
     * has its one answer (the generation, the element, or ENOENT); returns the generation.
     */
    private int lookups(long end, int count) {
        send(nft, requests, end, "the lookups");
        int generation = 0;
        for (int answered = 0; answered < count; ) {
            long n = receive(nft);
            for (long at = 0; at + nlmsghdr.sizeof() <= n; ) {
                int length = buffer.get(ValueLayout.JAVA_INT, at);
                int type = Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, at + 4));
                answered++;
                if (type == kernel_h.NLMSG_ERROR) {
                    int error = buffer.get(ValueLayout.JAVA_INT, at + nlmsghdr.sizeof());
                    if (error != 0 && error != -libc_h.ENOENT) {
                        throw new IllegalStateException("java-floor: a lookup failed: errno " + -error);
                    }
                } else if ((type & 0xff) == kernel_h.NFT_MSG_NEWGEN) {
                    for (long a = at + nlmsghdr.sizeof() + nfgenmsg.sizeof(); a + ATTRIBUTE_HEADER <= at + length; ) {
                        int attributeLength = Short.toUnsignedInt(buffer.get(ValueLayout.JAVA_SHORT, a));
                        if ((buffer.get(ValueLayout.JAVA_SHORT, a + 2) & 0x3fff) == kernel_h.NFTA_GEN_ID) {
                            generation = buffer.get(NETWORK_INT, a + ATTRIBUTE_HEADER);
                        }
                        a += align(Math.max(attributeLength, ATTRIBUTE_HEADER));
                    }
                }
                at += align(length);
            }
        }
        return generation;
    }

    /** Reads until the commit's first answer: the element's ACK, or the error that refused the batch. */
    private void awaitAck() {
        for (;;) {
            long n = receive(nft);
            for (long at = 0; at + nlmsghdr.sizeof() <= n; ) {
                int length = buffer.get(ValueLayout.JAVA_INT, at);
                if (buffer.get(ValueLayout.JAVA_SHORT, at + 4) == kernel_h.NLMSG_ERROR) {
                    int error = buffer.get(ValueLayout.JAVA_INT, at + nlmsghdr.sizeof());
                    if (error != 0) {
                        throw new IllegalStateException("java-floor: the kernel refused the batch: errno " + -error);
                    }
                    return;
                }
                at += align(length);
            }
        }
    }

    private void send(MemorySegment socket, MemorySegment message, long length, String what) {
        if (libmnl_h.mnl_socket_sendto(callState, socket, message, length) < 0) {
            throw new IllegalStateException("java-floor: cannot send " + what + ": errno " + CallState.errno(callState));
        }
    }

    private long receive(MemorySegment socket) {
        long n = libmnl_h.mnl_socket_recvfrom(callState, socket, buffer, buffer.byteSize());
        if (n < 0) {
            throw new IllegalStateException("java-floor: cannot receive: errno " + CallState.errno(callState));
        }
        return n;
    }

    private static long align(long length) {
        return (length + 3) & ~3L;
    }

    @Override
    public void close() {
        libmnl_h.mnl_socket_close(callState, nft);
        libmnl_h.mnl_socket_close(callState, route);
        libmnl_h.mnl_socket_close(callState, watch);
        libmnl_h.mnl_socket_close(callState, diag);
        arena.close();
    }
}
