package dev.gatun.netlink;

import dev.gatun.GatunException;
import dev.gatun.bindings.internal.CallState;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.libmnl_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.bindings.internal.timeval;
import dev.gatun.internal.Errno;
import dev.gatun.internal.Libc;
import dev.gatun.internal.NativeLibraries;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A netlink socket of one protocol, created inside one network namespace (it stays there for
 * its whole life), built on libmnl. Requests are matched to their replies by sequence number,
 * so an error names the operation whose message failed.
 *
 * <p>One request at a time: calls from several threads are serialised.
 */
public final class NetlinkSocket implements AutoCloseable {

    /** Bytes read per recvmsg: more than the 32 KiB the kernel puts in one dump datagram. */
    private static final int RECEIVE_BYTES = 256 * 1024;
    private static final int DEFAULT_BUFFER_BYTES = 4 * 1024 * 1024;
    private static final int REPLY_TIMEOUT_SECONDS = 30;
    private static final int DUMP_ATTEMPTS = 10;

    private final NetlinkProtocol protocol;
    private final NetworkNamespace namespace;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment mnl;
    private final int fd;
    private final int portId;
    private final MemorySegment receiveBuffer;
    private final MemorySegment callState;
    private final ReentrantLock lock = new ReentrantLock();
    private int sequence = ThreadLocalRandom.current().nextInt(1, 1 << 30);
    /** The send buffer as last read back; 0 until a message larger than SURELY_SENDABLE asks. */
    private int sendBufferBytes;
    /**
     * Messages this small are sent without reading the send buffer's size back: it was asked for
     * 4 MiB, the kernel grants at least twice net.core.wmem_max's smaller value, and wmem_max is
     * 208 KiB by default. Not asking saves a one-shot command linking getsockopt (milliseconds
     * in a new JVM) and two system calls per socket.
     */
    private static final int SURELY_SENDABLE = 32 * 1024;
    private boolean closed;
    /** How long a receive waits: {@link #REPLY_TIMEOUT_SECONDS} unless {@link #setReceiveTimeout} changed it. */
    private volatile Duration replyTimeout = Duration.ofSeconds(REPLY_TIMEOUT_SECONDS);

    private NetlinkSocket(NetlinkProtocol protocol, NetworkNamespace namespace, MemorySegment mnl) {
        this.protocol = protocol;
        this.namespace = namespace;
        this.mnl = mnl;
        this.fd = libmnl_h.mnl_socket_get_fd(mnl);
        this.receiveBuffer = arena.allocate(RECEIVE_BYTES, 8);
        this.callState = CallState.allocate(arena);
        this.portId = libmnl_h.mnl_socket_get_portid(mnl);
    }

    /** Opens a socket of {@code protocol} inside {@code namespace}. */
    public static NetlinkSocket open(NetlinkProtocol protocol, NetworkNamespace namespace) {
        return open(protocol, namespace, 0);
    }

    /**
     * Opens a socket that also receives the notifications of multicast {@code group} (for
     * example NFNLGRP_NFTABLES); read them with {@link #receiveNotifications}.
     */
    public static NetlinkSocket subscribe(NetlinkProtocol protocol, NetworkNamespace namespace, int... groups) {
        int mask = 0;
        for (int group : groups) {
            if (group < 1 || group > 32) {
                throw new IllegalArgumentException("netlink group " + group + " is out of range 1-32");
            }
            mask |= 1 << (group - 1);
        }
        return open(protocol, namespace, mask);
    }

    private static NetlinkSocket open(NetlinkProtocol protocol, NetworkNamespace namespace, int groups) {
        NativeLibraries.requireNetlink();
        // The socket is created on a thread inside the namespace; it keeps that namespace for good.
        MemorySegment mnl = namespace.call(() -> create(protocol, namespace, groups));
        NetlinkSocket s = new NetlinkSocket(protocol, namespace, mnl);
        try {
            s.configure();
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    private static MemorySegment create(NetlinkProtocol protocol, NetworkNamespace namespace, int groups) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = CallState.allocate(a);
            MemorySegment mnl = libmnl_h.mnl_socket_open2(state, protocol.number, libc_h.SOCK_CLOEXEC);
            if (mnl.equals(MemorySegment.NULL)) {
                throw Errno.exception("open a " + protocol.label + " socket in " + namespace.describe(), CallState.errno(state));
            }
            if (libmnl_h.mnl_socket_bind(state, mnl, groups, libmnl_h.MNL_SOCKET_AUTOPID) < 0) {
                int errno = CallState.errno(state);
                libmnl_h.mnl_socket_close(state, mnl);
                throw Errno.exception("bind a " + protocol.label + " socket in " + namespace.describe(), errno);
            }
            return mnl;
        }
    }

    private void configure() {
        // Extended ACKs carry the kernel's own explanation; capped ACKs keep error replies small.
        Libc.trySetIntSocketOption(fd, libc_h.SOL_NETLINK, kernel_h.NETLINK_EXT_ACK, 1);
        Libc.trySetIntSocketOption(fd, libc_h.SOL_NETLINK, kernel_h.NETLINK_CAP_ACK, 1);
        requestBuffer(libc_h.SO_RCVBUFFORCE, libc_h.SO_RCVBUF, DEFAULT_BUFFER_BYTES);
        // Not read back until a message needs more than SURELY_SENDABLE (see there).
        requestBuffer(libc_h.SO_SNDBUFFORCE, libc_h.SO_SNDBUF, DEFAULT_BUFFER_BYTES);
        setReceiveTimeout(Duration.ofSeconds(REPLY_TIMEOUT_SECONDS));
    }

    /**
     * Sets a socket buffer size, above the system limit where we may (the FORCE option needs
     * CAP_NET_ADMIN), else as large as the limit allows. Returns the size the kernel reports.
     */
    private int setBuffer(int forceOption, int plainOption, int bytes) {
        requestBuffer(forceOption, plainOption, bytes);
        // The kernel doubles the value for bookkeeping and reports the doubled size.
        return Libc.getIntSocketOption(fd, libc_h.SOL_SOCKET, plainOption, "read a socket buffer size") / 2;
    }

    private void requestBuffer(int forceOption, int plainOption, int bytes) {
        if (Libc.trySetIntSocketOption(fd, libc_h.SOL_SOCKET, forceOption, bytes) != 0) {
            Libc.trySetIntSocketOption(fd, libc_h.SOL_SOCKET, plainOption, bytes);
        }
    }

    public NetlinkProtocol protocol() {
        return protocol;
    }

    public NetworkNamespace namespace() {
        return namespace;
    }

    /** The port id the kernel bound this socket to. */
    public int portId() {
        return portId;
    }

    /** Reserves {@code count} consecutive sequence numbers and returns the first. */
    public int reserveSequences(int count) {
        lock.lock();
        try {
            int first = sequence;
            sequence += count;
            if (sequence < 0 || sequence > Integer.MAX_VALUE - (1 << 24)) {
                sequence = 1;
                first = sequence;
                sequence += count;
            }
            return first;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends {@code length} bytes of requests and reads replies until every request that asked
     * for an ACK has one. {@code operations.get(i)} names the message with sequence
     * {@code firstSequence + i}; the messages {@code acked.from} to {@code acked.to} (inclusive)
     * asked for an ACK, the others only get a reply when they fail. Messages that are not ACKs
     * or errors go to {@code onReply}. Throws for the first error, naming its operation.
     */
    public void transact(MemorySegment requests, long length, int firstSequence, Operations operations,
                         AckedRange acked, Consumer<MemorySegment> onReply) {
        transact(requests, length, firstSequence, operations, acked, onReply, 0);
    }

    /**
     * Like {@link #transact(MemorySegment, long, int, Operations, AckedRange, Consumer)}, but a
     * failure with errno {@code expected} (for example ENOENT for a lookup) is returned instead
     * of thrown: for answers that are normal, an exception is too costly. Returns 0 on success.
     */
    public int transact(MemorySegment requests, long length, int firstSequence, Operations operations,
                        AckedRange acked, Consumer<MemorySegment> onReply, int expected) {
        lock.lock();
        try {
            Replies.Acks acks = new Replies.Acks(firstSequence, operations.count(), acked, onReply);
            exchange(requests, length, operations, acks);
            ExchangeFailure failure = acks.failure();
            if (failure.index >= 0) {
                if (expected != 0 && failure.errno == expected && failure.others == 0) {
                    return expected;
                }
                throw failure.exception(operations.get(failure.index), where(), protocol,
                        message(requests, length, firstSequence + failure.index));
            }
            return 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends several independent lookups in one datagram and reads every answer: one system call
     * each way instead of one per request. Each request must be a lookup the kernel answers with
     * exactly one message, its reply or an error (a GET of one object, an exact sock_diag
     * request), built without NLM_F_ACK: an ACK after each reply would be one more datagram to
     * receive per request (one that came anyway is skipped as stale by a later read). Replies go
     * to {@code onReply} with the request's index;
     * returns each request's errno, 0 for success. An errno other than {@code tolerated} throws,
     * naming that request's operation.
     */
    public int[] pipeline(MemorySegment requests, long length, int firstSequence, Operations operations,
                          BiConsumer<Integer, MemorySegment> onReply, int tolerated) {
        lock.lock();
        try {
            Replies.Answers answers = new Replies.Answers(firstSequence, operations.count(), onReply, tolerated);
            exchange(requests, length, operations, answers);
            for (int i = 0; i < answers.errnos().length; i++) {
                if (answers.errnos()[i] < 0) {
                    ExchangeFailure failure = new ExchangeFailure();
                    failure.record(i, -1 - answers.errnos()[i], answers.acks()[i]);
                    throw failure.exception(operations.get(i), where(), protocol, message(requests, length, firstSequence + i));
                }
            }
            return answers.errnos();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends one dump request and decodes every message of the answer. When the kernel marks
     * the dump as interrupted (the data changed while it was read), the dump is read again.
     */
    public <T> List<T> dump(MemorySegment request, long length, String operation, Function<MemorySegment, T> decode) {
        lock.lock();
        try {
            Operations ops = Operations.of(operation);
            for (int attempt = 1; attempt <= DUMP_ATTEMPTS; attempt++) {
                int seq = nextSequence();
                nlmsghdr.nlmsg_seq(request, seq);
                Replies.Dumped<T> dumped = new Replies.Dumped<>(seq, decode);
                exchange(request, length, ops, dumped);
                ExchangeFailure failure = dumped.failure();
                if (failure.index >= 0) {
                    throw failure.exception(operation, where(), protocol, request.asSlice(0, length));
                }
                if (!dumped.interrupted()) {
                    return dumped.items();
                }
                // Something is changing the data right now: give it a moment, longer each time.
                LockSupport.parkNanos(attempt * 1_000_000L);
            }
            throw new DumpInterruptedException(operation + where(), "the kernel interrupted the dump " + DUMP_ATTEMPTS
                    + " times because the data kept changing");
        } finally {
            lock.unlock();
        }
    }

    /**
     * The one exchange loop: sends {@code requests} (under the lock the caller holds) and hands
     * every message received to {@code replies} until they are done. A reply that does not come
     * within the receive timeout is a {@link ReplyTimeoutException}.
     */
    private void exchange(MemorySegment requests, long length, Operations operations, Replies replies) {
        send(requests, length, operations);
        while (!replies.done()) {
            long n = receive(operations);
            NetlinkMessages.forEach(receiveBuffer, n, replies::message);
        }
    }

    /** What {@link #receiveNotifications} saw. */
    public enum Receipt { MESSAGES, TIMEOUT, OVERRUN }

    /**
     * Waits up to the socket's reply timeout for one datagram of notifications and hands each
     * message to {@code each}. OVERRUN means the kernel dropped notifications because the
     * receive buffer was full: the reader must assume it missed changes.
     */
    public Receipt receiveNotifications(Consumer<MemorySegment> each) {
        return notifications(each, 0, "receive notifications");
    }

    /**
     * Reads one datagram of notifications if one is queued, without waiting: TIMEOUT when none
     * is, so a cache can ask "did anything change?" for the price of one system call.
     */
    public Receipt pollNotifications(Consumer<MemorySegment> each) {
        return notifications(each, libc_h.MSG_DONTWAIT, "poll notifications");
    }

    private Receipt notifications(Consumer<MemorySegment> each, int flags, String what) {
        lock.lock();
        try {
            ensureOpen();
            long n = libc_h.recv(callState, fd, receiveBuffer, RECEIVE_BYTES, flags);
            if (n < 0) {
                int errno = CallState.errno(callState);
                if (errno == libc_h.EAGAIN || errno == libc_h.EINTR) {
                    return Receipt.TIMEOUT;
                }
                if (errno == libc_h.ENOBUFS) {
                    return Receipt.OVERRUN;
                }
                throw Errno.exception(what + " in " + namespace.describe(), errno);
            }
            NetlinkMessages.forEach(receiveBuffer, n, each);
            return Receipt.MESSAGES;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sets how much the kernel queues for this socket. A socket that only needs to learn that
     * something changed can stay small: an overrun says so too, and nothing large waits unread.
     */
    public void setReceiveBufferBytes(int bytes) {
        requestBuffer(libc_h.SO_RCVBUFFORCE, libc_h.SO_RCVBUF, bytes);
    }

    /**
     * How long a receive waits for a reply ({@link #REPLY_TIMEOUT_SECONDS} from the start); a
     * reader thread shortens it to notice that it should stop.
     */
    public void setReceiveTimeout(Duration timeout) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment tv = timeval.allocate(a);
            timeval.tv_sec(tv, timeout.toSeconds());
            timeval.tv_usec(tv, timeout.toMillisPart() * 1000L);
            MemorySegment state = CallState.allocate(a);
            if (libc_h.setsockopt(state, fd, libc_h.SOL_SOCKET, libc_h.SO_RCVTIMEO, tv, (int) tv.byteSize()) < 0) {
                throw Errno.exception("set the receive timeout of a " + protocol.label + " socket", CallState.errno(state));
            }
        }
        replyTimeout = timeout;
    }

    private int nextSequence() {
        return reserveSequences(1);
    }

    /** Grows the send buffer so that one message of {@code length} bytes fits (netlink has no partial sends). */
    private void ensureSendBuffer(long length) {
        if (length > SURELY_SENDABLE && length + 1024 > sendBufferBytes) {
            int want = (int) Math.min(Integer.MAX_VALUE / 2, Math.max(length * 2, DEFAULT_BUFFER_BYTES));
            sendBufferBytes = setBuffer(libc_h.SO_SNDBUFFORCE, libc_h.SO_SNDBUF, want);
            if (length + 1024 > sendBufferBytes) {
                throw new GatunException("a netlink batch of " + length + " bytes does not fit in the socket's send buffer ("
                        + sendBufferBytes + " bytes, and raising it needs CAP_NET_ADMIN)");
            }
        }
    }

    private void send(MemorySegment data, long length, Operations operations) {
        ensureOpen();
        ensureSendBuffer(length);
        long sent = libmnl_h.mnl_socket_sendto(callState, mnl, data, length);
        if (sent < 0) {
            throw Errno.exception("send " + operations.describe() + where(), CallState.errno(callState));
        }
    }

    private long receive(Operations operations) {
        long n = libmnl_h.mnl_socket_recvfrom(callState, mnl, receiveBuffer, RECEIVE_BYTES);
        if (n < 0) {
            int errno = CallState.errno(callState);
            if (errno == libc_h.EAGAIN) {
                throw new ReplyTimeoutException(operations.describe() + where(), replyTimeout);
            }
            if (errno == libc_h.ENOBUFS) {
                throw new ReplyOverrunException(operations.describe() + where());
            }
            throw Errno.exception("receive the reply to " + operations.describe() + where(), errno);
        }
        return n;
    }

    /**
     * Where this socket's requests run, as every failure names it: the callers name their
     * operations alone ("list tables"), and the socket, which knows its namespace, adds it.
     */
    private String where() {
        return " in " + namespace.describe();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("netlink socket is closed");
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            libmnl_h.mnl_socket_close(callState, mnl);
            arena.close();
        } finally {
            lock.unlock();
        }
    }

    /** The positions, within one exchange, of the messages that asked for an ACK. */
    public record AckedRange(int from, int to) {
        public static final AckedRange NONE = new AckedRange(0, -1);

        public static AckedRange only(int index) {
            return new AckedRange(index, index);
        }

        boolean contains(int index) {
            return index >= from && index <= to;
        }

        int count() {
            return Math.max(0, to - from + 1);
        }
    }

    /**
     * The message of {@code requests} with sequence number {@code sequence}, or null when none has
     * it: what an error's rejected-attribute offset counts from. Walked only when a request failed.
     */
    private static MemorySegment message(MemorySegment requests, long length, int sequence) {
        MemorySegment[] found = {null};
        NetlinkMessages.forEach(requests, length, m -> {
            if (found[0] == null && NetlinkMessages.sequence(m) == sequence) {
                found[0] = m;
            }
        });
        return found[0];
    }
}
