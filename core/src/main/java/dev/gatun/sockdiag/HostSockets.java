package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.inet_diag_bc_op;
import dev.gatun.bindings.internal.inet_diag_msg;
import dev.gatun.bindings.internal.inet_diag_req_v2;
import dev.gatun.bindings.internal.inet_diag_sockid;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nlattr;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netlink.Operations;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Which sockets of a namespace hold local ports, asked of the kernel over sock_diag
 * (NETLINK_SOCK_DIAG, inet_diag_req_v2): TCP sockets that listen, UDP sockets bound to a port.
 * The socket is opened in the namespace, so it sees that namespace's sockets only. Two ways to
 * ask: {@link #receiving} looks up, for each local address and port, the one socket the kernel
 * would hand a packet to (exact requests, all in one datagram: no table walk, for the publish
 * path); {@link #holding} and {@link #holdingRange} dump every socket on some ports (the kernel
 * filters by port itself with inet_diag bytecode, but walks its whole table of listeners for
 * each dump), for reports and for choosing a free port. No privilege is needed.
 */
public final class HostSockets implements AutoCloseable {

    /** Exact lookups per datagram: 72 bytes each. */
    private static final int MAX_LOOKUPS = 512;
    private static final int LOOKUP_BYTES = NetlinkMessages.HEADER_BYTES + (int) inet_diag_req_v2.sizeof();

    /** Above this many ports, the kernel filters by their range and the ports are picked out here. */
    private static final int MAX_PORTS_IN_FILTER = 256;
    private static final int OP_BYTES = (int) inet_diag_bc_op.sizeof();

    private final NetlinkSocket socket;

    private HostSockets(NetlinkSocket socket) {
        this.socket = socket;
    }

    public static HostSockets open(NetworkNamespace namespace) {
        return new HostSockets(NetlinkSocket.open(NetlinkProtocol.SOCK_DIAG, namespace));
    }

    /**
     * The sockets of {@code protocol} (IPPROTO_TCP or IPPROTO_UDP) on any of {@code ports}: IPv4
     * ones when {@code ipv4}, and always the IPv6 ones (an IPv6 wildcard socket may hold IPv4 too).
     */
    public List<BoundSocket> holding(int protocol, Collection<Integer> ports, boolean ipv4) {
        TreeSet<Integer> sorted = new TreeSet<>(ports);
        if (sorted.isEmpty()) {
            return List.of();
        }
        List<BoundSocket> out = new ArrayList<>();
        for (boolean v6 : ipv4 ? new boolean[] {false, true} : new boolean[] {true}) {
            for (BoundSocket s : dump(protocol, v6, sorted.size() <= MAX_PORTS_IN_FILTER ? sorted : null,
                    sorted.first(), sorted.last())) {
                if (sorted.contains(s.port())) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /**
     * The socket that would take a TCP connection or a UDP datagram to each of {@code locals},
     * as the kernel looks it up for a packet: one on that address, on the wildcard, or an IPv6
     * wildcard socket that takes IPv4 too ({@code 0.0.0.0} finds wildcard sockets only). Sockets
     * bound to a device (SO_BINDTODEVICE) are not found this way. One datagram per 512 lookups;
     * a socket found by several lookups is listed once per lookup.
     */
    public List<BoundSocket> receiving(int protocol, List<InetSocketAddress> locals) {
        List<BoundSocket> out = new ArrayList<>();
        for (int from = 0; from < locals.size(); from += MAX_LOOKUPS) {
            int count = Math.min(MAX_LOOKUPS, locals.size() - from);
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment requests = arena.allocate((long) LOOKUP_BYTES * count, 8);
                int first = socket.reserveSequences(count);
                for (int i = 0; i < count; i++) {
                    MemorySegment nlh = lookup(requests.asSlice((long) i * LOOKUP_BYTES, LOOKUP_BYTES), protocol,
                            locals.get(from + i));
                    nlmsghdr.nlmsg_seq(nlh, first + i);
                }
                int base = from;
                Operations ops = new Operations(count, i -> "look up the " + name(protocol) + " socket of "
                        + locals.get(base + i));
                socket.pipeline(requests, (long) LOOKUP_BYTES * count, first, ops, (index, reply) -> {
                    if (NetlinkMessages.type(reply) == kernel_h.SOCK_DIAG_BY_FAMILY && (protocol != libc_h.IPPROTO_TCP
                            || Byte.toUnsignedInt(inet_diag_msg.idiag_state(reply.asSlice(NetlinkMessages.HEADER_BYTES)))
                            == libc_h.TCP_LISTEN)) {
                        out.add(decode(reply, protocol));
                    }
                }, libc_h.ENOENT);
            }
        }
        return out;
    }

    /**
     * An exact SOCK_DIAG_BY_FAMILY request for the socket of {@code protocol} that takes packets
     * to {@code local}, answered with one message: found, the socket; not found, ENOENT.
     */
    static MemorySegment lookup(MemorySegment at, int protocol, InetSocketAddress local) {
        MemorySegment nlh = NetlinkMessages.startRequest(at, kernel_h.SOCK_DIAG_BY_FAMILY, 0);
        MemorySegment r = NetlinkMessages.append(nlh, inet_diag_req_v2.sizeof());
        InetAddress address = local.getAddress();
        inet_diag_req_v2.sdiag_family(r, (byte) (address instanceof Inet6Address ? libc_h.AF_INET6 : libc_h.AF_INET));
        inet_diag_req_v2.sdiag_protocol(r, (byte) protocol);
        boolean tcp = protocol == libc_h.IPPROTO_TCP;
        inet_diag_req_v2.idiag_states(r, tcp ? 1 << libc_h.TCP_LISTEN : -1);
        MemorySegment id = r.asSlice(inet_diag_req_v2.id$OFFSET, inet_diag_sockid.sizeof());
        id.set(NetlinkMessages.NETWORK_INT, inet_diag_sockid.idiag_cookie$OFFSET, kernel_h.INET_DIAG_NOCOOKIE);
        id.set(NetlinkMessages.NETWORK_INT, inet_diag_sockid.idiag_cookie$OFFSET + 4, kernel_h.INET_DIAG_NOCOOKIE);
        // The kernel looks a TCP socket up by the source fields as its local end, a UDP socket by
        // the destination fields (tcp_diag and udp_diag each call their protocol's lookup so).
        byte[] raw = address.getAddress();
        MemorySegment.copy(raw, 0, id, JAVA_BYTE, tcp ? inet_diag_sockid.idiag_src$OFFSET : inet_diag_sockid.idiag_dst$OFFSET,
                raw.length);
        id.set(NetlinkMessages.NETWORK_SHORT, tcp ? inet_diag_sockid.idiag_sport$OFFSET : inet_diag_sockid.idiag_dport$OFFSET,
                (short) local.getPort());
        return nlh;
    }

    private static String name(int protocol) {
        return protocol == libc_h.IPPROTO_TCP ? "TCP" : "UDP";
    }

    /** The sockets of {@code protocol}, both families, on a port from {@code low} to {@code high}. */
    public List<BoundSocket> holdingRange(int protocol, int low, int high) {
        List<BoundSocket> out = new ArrayList<>(dump(protocol, false, null, low, high));
        out.addAll(dump(protocol, true, null, low, high));
        return out;
    }

    /** One family's dump, filtered by the kernel alone (package-private so a test can see the kernel's filter work). */
    List<BoundSocket> dump(int protocol, boolean ipv6, Collection<Integer> ports, int low, int high) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nlh = request(arena, protocol, ipv6, ports, low, high);
            return socket.dump(nlh, nlmsghdr.nlmsg_len(nlh), "list the " + (protocol == libc_h.IPPROTO_TCP ? "TCP" : "UDP")
                    + (ipv6 ? "v6" : "v4") + " sockets on ports " + low + "-" + high,
                    m -> decode(m, protocol));
        }
    }

    /**
     * A SOCK_DIAG_BY_FAMILY dump request: TCP sockets in LISTEN, UDP sockets in any state, on
     * one of {@code ports} (in ascending order), or from {@code low} to {@code high} when
     * {@code ports} is null.
     */
    static MemorySegment request(Arena arena, int protocol, boolean ipv6, Collection<Integer> ports, int low, int high) {
        int filterBytes = ports == null ? 4 * OP_BYTES : 3 * OP_BYTES * ports.size();
        MemorySegment nlh = NetlinkMessages.startRequest(arena.allocate(1024 + filterBytes, 8),
                kernel_h.SOCK_DIAG_BY_FAMILY, kernel_h.NLM_F_DUMP);
        MemorySegment r = NetlinkMessages.append(nlh, inet_diag_req_v2.sizeof());
        inet_diag_req_v2.sdiag_family(r, (byte) (ipv6 ? libc_h.AF_INET6 : libc_h.AF_INET));
        inet_diag_req_v2.sdiag_protocol(r, (byte) protocol);
        inet_diag_req_v2.idiag_states(r, protocol == libc_h.IPPROTO_TCP ? 1 << libc_h.TCP_LISTEN : -1);
        MemorySegment id = r.asSlice(inet_diag_req_v2.id$OFFSET, inet_diag_sockid.sizeof());
        id.set(NetlinkMessages.NETWORK_INT, inet_diag_sockid.idiag_cookie$OFFSET, kernel_h.INET_DIAG_NOCOOKIE);
        id.set(NetlinkMessages.NETWORK_INT, inet_diag_sockid.idiag_cookie$OFFSET + 4, kernel_h.INET_DIAG_NOCOOKIE);
        MemorySegment code = ports == null ? between(arena, low, high) : anyOf(arena, ports);
        int header = (int) nlattr.sizeof();
        MemorySegment a = NetlinkMessages.append(nlh, header + code.byteSize());
        nlattr.nla_len(a, (short) (header + code.byteSize()));
        nlattr.nla_type(a, (short) kernel_h.INET_DIAG_REQ_BYTECODE);
        MemorySegment.copy(code, 0, a, header, code.byteSize());
        return nlh;
    }

    /**
     * inet_diag bytecode that accepts a socket whose local port is one of {@code ports}, as ss
     * compiles "sport = :A or sport = :B": a port test (two ops) followed by a jump to the end,
     * for each port but the last. The kernel accepts a socket when the program ends exactly at
     * its end and refuses it when a jump goes past; it also checks that every "no" jump lands on
     * an op reached by following the "yes" jumps, which the jump ops provide.
     */
    static MemorySegment anyOf(Arena arena, Collection<Integer> ports) {
        int n = ports.size();
        int length = 3 * OP_BYTES * n - OP_BYTES;
        MemorySegment code = arena.allocate(length, 4);
        int at = 0;
        int i = 0;
        for (int port : ports) {
            boolean last = ++i == n;
            // A match goes on to the jump (or, for the last port, to the end: accept); a miss
            // skips the jump to the next port's test (or, for the last, past the end: refuse).
            op(code, at, kernel_h.INET_DIAG_BC_S_EQ, 2 * OP_BYTES, 3 * OP_BYTES);
            op(code, at + OP_BYTES, 0, 0, port);
            at += 2 * OP_BYTES;
            if (!last) {
                // Taken always: JMP follows its "no".
                op(code, at, kernel_h.INET_DIAG_BC_JMP, OP_BYTES, length - at);
                at += OP_BYTES;
            }
        }
        return code;
    }

    /** inet_diag bytecode that accepts a socket whose local port is from {@code low} to {@code high}. */
    static MemorySegment between(Arena arena, int low, int high) {
        MemorySegment code = arena.allocate(4 * OP_BYTES, 4);
        op(code, 0, kernel_h.INET_DIAG_BC_S_GE, 2 * OP_BYTES, 5 * OP_BYTES);
        op(code, OP_BYTES, 0, 0, low);
        op(code, 2 * OP_BYTES, kernel_h.INET_DIAG_BC_S_LE, 2 * OP_BYTES, 3 * OP_BYTES);
        op(code, 3 * OP_BYTES, 0, 0, high);
        return code;
    }

    private static void op(MemorySegment code, int at, int kind, int yes, int no) {
        MemorySegment op = code.asSlice(at, OP_BYTES);
        inet_diag_bc_op.code(op, (byte) kind);
        inet_diag_bc_op.yes(op, (byte) yes);
        inet_diag_bc_op.no(op, (short) no);
    }

    /**
     * One socket of a SOCK_DIAG_BY_FAMILY reply to a request for {@code protocol} (the reply
     * does not repeat it): the inet_diag_msg after the header, and its attributes.
     */
    public static BoundSocket decode(MemorySegment message, int protocol) {
        MemorySegment m = NetlinkMessages.familyHeader(message, inet_diag_msg.sizeof(), "sock_diag");
        boolean ipv6 = Byte.toUnsignedInt(inet_diag_msg.idiag_family(m)) == libc_h.AF_INET6;
        MemorySegment id = m.asSlice(inet_diag_msg.id$OFFSET, inet_diag_sockid.sizeof());
        int port = Short.toUnsignedInt(id.get(NetlinkMessages.NETWORK_SHORT, inet_diag_sockid.idiag_sport$OFFSET));
        byte[] raw = id.asSlice(inet_diag_sockid.idiag_src$OFFSET, ipv6 ? 16 : 4).toArray(JAVA_BYTE);
        InetAddress address;
        try {
            // An IPv4-mapped IPv6 address comes back as the IPv4 address it maps, which is what it receives.
            address = InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        boolean[] v6only = {false};
        NetlinkMessages.forEachAttribute(message, NetlinkMessages.HEADER_BYTES + inet_diag_msg.sizeof(), (type, payload) -> {
            if (type == kernel_h.INET_DIAG_SKV6ONLY && payload.byteSize() >= 1) {
                v6only[0] = payload.get(JAVA_BYTE, 0) != 0;
            }
        });
        return new BoundSocket(ipv6, protocol, address, port, v6only[0], inet_diag_msg.idiag_uid(m),
                Integer.toUnsignedLong(inet_diag_msg.idiag_inode(m)));
    }

    @Override
    public void close() {
        socket.close();
    }
}
