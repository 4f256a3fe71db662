package dev.gatun.conntrack;

import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nfgenmsg;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netlink.Operations;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;

import static dev.gatun.bindings.internal.libmnl_h.*;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Conntrack entries of a namespace over ctnetlink. When a published port is removed or moves to
 * another container, the entries that the old mapping made must go, or a client that keeps its
 * source port (UDP) stays stuck on the old container.
 */
public final class Conntrack implements AutoCloseable {

    private final NetlinkSocket socket;

    private Conntrack(NetlinkSocket socket) {
        this.socket = socket;
    }

    public static Conntrack open(NetworkNamespace namespace) {
        return new Conntrack(NetlinkSocket.open(NetlinkProtocol.NETFILTER, namespace));
    }

    /**
     * A published port whose entries are to go: IPv6 or IPv4, protocol number, host address
     * (null: any address of that family), port.
     */
    public record NattedPort(boolean ipv6, int protocol, InetAddress address, int port) {}

    /**
     * Deletes the destination-NATed entries whose original destination is one of {@code ports}.
     * The kernel walks its whole conntrack table for each dump (milliseconds on a busy host), so
     * the table is read once per address family the ports have, for all of them: removing a
     * container's ports costs one walk, not one per port. Returns how many entries were deleted.
     */
    public int deleteNatted(List<NattedPort> ports) {
        if (ports.isEmpty()) {
            return 0;
        }
        int deleted = 0;
        for (boolean ipv6 : new boolean[] {false, true}) {
            List<NattedPort> ofFamily = ports.stream().filter(p -> p.ipv6() == ipv6).toList();
            if (ofFamily.isEmpty()) {
                continue;
            }
            int family = ipv6 ? libc_h.AF_INET6 : libc_h.AF_INET;
            for (byte[] tuple : matching(family, ofFamily)) {
                if (delete(family, tuple)) {
                    deleted++;
                }
            }
        }
        return deleted;
    }

    /**
     * An established TCP connection that conntrack holds, destination-NATed: the address and
     * port it was sent to (its original destination) and where it was NATed to (its reply's
     * source).
     */
    public record NattedFlow(byte[] destination, int port, byte[] target) {

        /** Whether it came in on one of {@code ports} (TCP) and was NATed to {@code target}. */
        public boolean isThrough(List<NattedPort> ports, InetAddress target) {
            return Arrays.equals(this.target, target.getAddress()) && toAnyOf(ports, libc_h.IPPROTO_TCP, destination, port);
        }
    }

    /**
     * Every established, destination-NATed TCP connection of one address family: one walk of
     * the table, which every drain waiting meanwhile can share (see the driver's FlowDrain).
     */
    public List<NattedFlow> establishedNatted(boolean ipv6) {
        int family = ipv6 ? libc_h.AF_INET6 : libc_h.AF_INET;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nlh = nattedDump(arena, family);
            return socket.dump(nlh, nlmsghdr.nlmsg_len(nlh), "list conntrack entries", Conntrack::establishedNatted);
        }
    }

    /** The flow of an entry that is an established, destination-NATed TCP connection, else null. */
    static NattedFlow establishedNatted(MemorySegment m) {
        long start = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) nfgenmsg.sizeof());
        Tuple[] original = {null};
        Tuple[] reply = {null};
        int[] status = {0};
        int[] state = {-1};
        NetlinkMessages.forEachAttribute(m, start, (type, payload) -> {
            if (type == kernel_h.CTA_STATUS) {
                status[0] = NetlinkMessages.networkU32(payload, "CTA_STATUS");
            } else if (type == kernel_h.CTA_TUPLE_ORIG) {
                original[0] = Tuple.of(payload);
            } else if (type == kernel_h.CTA_TUPLE_REPLY) {
                reply[0] = Tuple.of(payload);
            } else if (type == kernel_h.CTA_PROTOINFO) {
                NetlinkMessages.forEachAttribute(payload, 0, (t, tcp) -> {
                    if (t == kernel_h.CTA_PROTOINFO_TCP) {
                        NetlinkMessages.forEachAttribute(tcp, 0, (k, v) -> {
                            if (k == kernel_h.CTA_PROTOINFO_TCP_STATE) {
                                state[0] = NetlinkMessages.u8(v, "CTA_PROTOINFO_TCP_STATE");
                            }
                        });
                    }
                });
            }
        });
        if (state[0] != kernel_h.TCP_CONNTRACK_ESTABLISHED || (status[0] & kernel_h.IPS_DST_NAT) == 0
                || original[0] == null || reply[0] == null || original[0].protocol() != libc_h.IPPROTO_TCP) {
            return null;
        }
        // The reply comes from where the connection was NATed to.
        return new NattedFlow(original[0].destination(), original[0].port(), reply[0].source());
    }

    private List<byte[]> matching(int family, List<NattedPort> ports) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nlh = nattedDump(arena, family);
            return socket.dump(nlh, nlmsghdr.nlmsg_len(nlh), "list conntrack entries", m -> tupleIfMatches(m, ports));
        }
    }

    /** The raw CTA_TUPLE_ORIG attribute of a destination-NATed entry to one of the ports, else null. */
    static byte[] tupleIfMatches(MemorySegment m, List<NattedPort> ports) {
        long start = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) nfgenmsg.sizeof());
        byte[][] tuple = {null};
        int[] status = {0};
        boolean[] match = {false};
        NetlinkMessages.forEachAttribute(m, start, (type, payload) -> {
            if (type == kernel_h.CTA_STATUS) {
                status[0] = NetlinkMessages.networkU32(payload, "CTA_STATUS");
            } else if (type == kernel_h.CTA_TUPLE_ORIG) {
                tuple[0] = payload.toArray(JAVA_BYTE);
                match[0] = Tuple.of(payload).isToAnyOf(ports);
            }
        });
        if (!match[0] || (status[0] & kernel_h.IPS_DST_NAT) == 0) {
            return null;
        }
        return tuple[0];
    }

    /** One direction of an entry, as conntrack keeps it: protocol, source and destination address, destination port. */
    private record Tuple(int protocol, byte[] source, byte[] destination, int port) {

        static Tuple of(MemorySegment tuple) {
            byte[][] addresses = {null, null};
            int[] protocolAndPort = {-1, -1};
            NetlinkMessages.forEachAttribute(tuple, 0, (type, payload) -> {
                if (type == kernel_h.CTA_TUPLE_IP) {
                    NetlinkMessages.forEachAttribute(payload, 0, (t, p) -> {
                        if (t == kernel_h.CTA_IP_V4_SRC || t == kernel_h.CTA_IP_V6_SRC) {
                            addresses[0] = p.toArray(JAVA_BYTE);
                        } else if (t == kernel_h.CTA_IP_V4_DST || t == kernel_h.CTA_IP_V6_DST) {
                            addresses[1] = p.toArray(JAVA_BYTE);
                        }
                    });
                } else if (type == kernel_h.CTA_TUPLE_PROTO) {
                    NetlinkMessages.forEachAttribute(payload, 0, (t, p) -> {
                        if (t == kernel_h.CTA_PROTO_NUM) {
                            protocolAndPort[0] = NetlinkMessages.u8(p, "CTA_PROTO_NUM");
                        } else if (t == kernel_h.CTA_PROTO_DST_PORT) {
                            protocolAndPort[1] = NetlinkMessages.networkU16(p, "CTA_PROTO_DST_PORT");
                        }
                    });
                }
            });
            return new Tuple(protocolAndPort[0], addresses[0], addresses[1], protocolAndPort[1]);
        }

        boolean isToAnyOf(List<NattedPort> ports) {
            return toAnyOf(ports, protocol, destination, port);
        }
    }

    /** Whether traffic of {@code protocol} to {@code destination}:{@code port} is to one of {@code ports} (a null address: any). */
    private static boolean toAnyOf(List<NattedPort> ports, int protocol, byte[] destination, int port) {
        for (NattedPort p : ports) {
            if (p.protocol() == protocol && p.port() == port
                    && (p.address() == null || Arrays.equals(p.address().getAddress(), destination))) {
                return true;
            }
        }
        return false;
    }

    /** Deletes the entry with this original tuple; false when it is already gone. */
    private boolean delete(int family, byte[] tuple) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nlh = header(arena, kernel_h.IPCTNL_MSG_CT_DELETE, kernel_h.NLM_F_ACK, family);
            MemorySegment nest = mnl_attr_nest_start(nlh, (short) kernel_h.CTA_TUPLE_ORIG);
            MemorySegment.copy(tuple, 0, NetlinkMessages.append(nlh, tuple.length), JAVA_BYTE, 0, tuple.length);
            mnl_attr_nest_end(nlh, nest);
            int seq = socket.reserveSequences(1);
            nlmsghdr.nlmsg_seq(nlh, seq);
            socket.transact(nlh, nlmsghdr.nlmsg_len(nlh), seq,
                    Operations.of("delete a conntrack entry"),
                    NetlinkSocket.AckedRange.only(0), null);
            return true;
        } catch (NetlinkException e) {
            if (e.isNotFound()) {
                return false;
            }
            throw e;
        }
    }

    /**
     * A dump of one family's destination-NATed entries, the only ones gatun asks about: the
     * kernel (from Linux 5.19) then walks its table and sends those alone, where a host's own
     * connections would otherwise be sent and decoded too. An older kernel ignores the filter
     * and sends every entry; the decoders check the status either way.
     */
    static MemorySegment nattedDump(Arena arena, int family) {
        MemorySegment nlh = header(arena, kernel_h.IPCTNL_MSG_CT_GET, kernel_h.NLM_F_DUMP | kernel_h.NLM_F_ACK, family);
        int dstNat = Integer.reverseBytes(kernel_h.IPS_DST_NAT); // network order, as CTA_STATUS is
        mnl_attr_put_u32(nlh, (short) kernel_h.CTA_STATUS, dstNat);
        mnl_attr_put_u32(nlh, (short) kernel_h.CTA_STATUS_MASK, dstNat);
        return nlh;
    }

    private static MemorySegment header(Arena arena, int message, int flags, int family) {
        MemorySegment nlh = NetlinkMessages.startRequest(arena.allocate(4096, 8),
                (kernel_h.NFNL_SUBSYS_CTNETLINK << 8) | message, flags);
        MemorySegment g = NetlinkMessages.append(nlh, nfgenmsg.sizeof());
        nfgenmsg.nfgen_family(g, (byte) family);
        nfgenmsg.version(g, (byte) kernel_h.NFNETLINK_V0);
        return nlh;
    }

    @Override
    public void close() {
        socket.close();
    }
}
