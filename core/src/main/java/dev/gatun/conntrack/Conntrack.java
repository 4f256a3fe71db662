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
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Predicate;

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
        return deleteFound(ports, this::matching);
    }

    /** Deletes, family by family, the entries {@code find} gives for the ports of that family; how many. */
    private int deleteFound(List<NattedPort> ports, BiFunction<Integer, List<NattedPort>, List<byte[]>> find) {
        int deleted = 0;
        for (boolean ipv6 : new boolean[] {false, true}) {
            List<NattedPort> ofFamily = ports.stream().filter(p -> p.ipv6() == ipv6).toList();
            if (ofFamily.isEmpty()) {
                continue;
            }
            int family = ipv6 ? libc_h.AF_INET6 : libc_h.AF_INET;
            for (byte[] tuple : find.apply(family, ofFamily)) {
                if (delete(family, tuple)) {
                    deleted++;
                }
            }
        }
        return deleted;
    }

    /**
     * Up to this many ports of one family are each found with a dump the kernel filters by
     * protocol, port and address; more share one dump of every untranslated entry of the family,
     * matched here (a repair that puts back thousands of UDP mappings walks the table once).
     */
    static final int FILTERED_DUMPS = 8;

    /**
     * Deletes the entries whose original destination is one of {@code ports} and that no dnat
     * translated: flows that began before the port was published, which would otherwise keep
     * missing it for as long as their client keeps sending. For a port of every address (a null
     * address), entries to any address of the host count: {@code isLocal} tells the host's own
     * addresses (127.0.0.0/8 and ::1 count always). Each port is found with the kernel's own
     * filters (Linux 5.10 for the tuple, 5.19 for the status; an older kernel sends more, and every
     * entry is checked here too). Returns how many entries were deleted.
     */
    public int deleteUntranslated(List<NattedPort> ports, Predicate<byte[]> isLocal) {
        return deleteFound(ports, (family, ofFamily) -> {
            if (ofFamily.size() > FILTERED_DUMPS) {
                return untranslated(family, null, ofFamily, isLocal);
            }
            List<byte[]> tuples = new ArrayList<>();
            for (NattedPort p : ofFamily) {
                tuples.addAll(untranslated(family, p, List.of(p), isLocal));
            }
            return tuples;
        });
    }

    /** The original tuples of untranslated entries to one of {@code ports}, dumped with {@code filter} (null: none). */
    private List<byte[]> untranslated(int family, NattedPort filter, List<NattedPort> ports, Predicate<byte[]> isLocal) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nlh = filter == null
                    ? untranslatedDump(arena, family, ports.getFirst().protocol(), null, 0, kernel_h.IPS_DST_NAT)
                    : untranslatedDump(arena, family, filter.protocol(), filter.address(), filter.port(), kernel_h.IPS_DST_NAT);
            PortIndex index = PortIndex.of(ports);
            return socket.dump(nlh, nlmsghdr.nlmsg_len(nlh), "list untranslated conntrack entries",
                    m -> untranslatedTupleIfMatches(m, index, isLocal));
        }
    }

    /**
     * The destination ports of the entries of {@code protocol}, both families, that no nat
     * translated either way and that never saw a reply: clients that sent to the host itself and
     * found nothing, where a mapping made now would miss them. The kernel sends only those (Linux
     * 5.19 on; an older one sends every entry of the protocol, checked here too), and each is read
     * for its status and port alone: a host under a UDP flood may hold a hundred thousand.
     */
    public Set<Integer> untranslatedPorts(int protocol) {
        int unwanted = kernel_h.IPS_DST_NAT | kernel_h.IPS_SRC_NAT | kernel_h.IPS_SEEN_REPLY;
        Set<Integer> ports = new HashSet<>();
        for (int family : new int[] {libc_h.AF_INET, libc_h.AF_INET6}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment nlh = untranslatedDump(arena, family, protocol, null, 0, unwanted);
                ports.addAll(socket.dump(nlh, nlmsghdr.nlmsg_len(nlh), "list untranslated conntrack entries",
                        m -> unansweredPort(m, protocol, unwanted)));
            }
        }
        return ports;
    }

    /** The original destination port of the entry in {@code m} if it is of {@code protocol} and has none of {@code unwanted}, else null. */
    static Integer unansweredPort(MemorySegment m, int protocol, int unwanted) {
        long start = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) nfgenmsg.sizeof());
        int[] statusAndPort = {0, -1, -1};
        NetlinkMessages.forEachAttribute(m, start, (type, payload) -> {
            if (type == kernel_h.CTA_STATUS) {
                statusAndPort[0] = NetlinkMessages.networkU32(payload, "CTA_STATUS");
            } else if (type == kernel_h.CTA_TUPLE_ORIG) {
                NetlinkMessages.forEachAttribute(payload, 0, (t, p) -> {
                    if (t == kernel_h.CTA_TUPLE_PROTO) {
                        NetlinkMessages.forEachAttribute(p, 0, (k, v) -> {
                            if (k == kernel_h.CTA_PROTO_NUM) {
                                statusAndPort[1] = NetlinkMessages.u8(v, "CTA_PROTO_NUM");
                            } else if (k == kernel_h.CTA_PROTO_DST_PORT) {
                                statusAndPort[2] = NetlinkMessages.networkU16(v, "CTA_PROTO_DST_PORT");
                            }
                        });
                    }
                });
            }
        });
        boolean wanted = (statusAndPort[0] & unwanted) == 0 && statusAndPort[1] == protocol && statusAndPort[2] >= 0;
        return wanted ? statusAndPort[2] : null;
    }

    /**
     * Ports by protocol and port number: a repair that puts back 100,000 UDP mappings matches each
     * entry of one dump against them in one look, not 100,000.
     */
    record PortIndex(Map<Integer, List<NattedPort>> byKey) {
        static PortIndex of(List<NattedPort> ports) {
            Map<Integer, List<NattedPort>> byKey = new HashMap<>();
            for (NattedPort p : ports) {
                byKey.computeIfAbsent(p.protocol() << 16 | p.port(), k -> new ArrayList<>(1)).add(p);
            }
            return new PortIndex(byKey);
        }

        List<NattedPort> at(int protocol, int port) {
            return byKey.getOrDefault(protocol << 16 | port, List.of());
        }
    }

    /** The raw CTA_TUPLE_ORIG of an entry that no dnat translated and that goes to one of the ports, else null. */
    static byte[] untranslatedTupleIfMatches(MemorySegment m, PortIndex ports, Predicate<byte[]> isLocal) {
        Untranslated u = untranslated(m);
        if (u == null) {
            return null;
        }
        Tuple t = u.original();
        for (NattedPort p : ports.at(t.protocol(), t.port())) {
            if (p.address() == null ? isLocal.test(t.destination()) || isLoopback(t.destination())
                    : Arrays.equals(p.address().getAddress(), t.destination())) {
                return u.raw().toArray(JAVA_BYTE);
            }
        }
        return null;
    }

    /** An entry no dnat translated: its original direction, parsed and as the kernel sent it (valid in the callback only). */
    private record Untranslated(Tuple original, MemorySegment raw) {}

    /** The entry in {@code m} if no dnat translated it, else null. */
    private static Untranslated untranslated(MemorySegment m) {
        long start = NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) nfgenmsg.sizeof());
        MemorySegment[] raw = {null};
        Tuple[] original = {null};
        int[] status = {0};
        NetlinkMessages.forEachAttribute(m, start, (type, payload) -> {
            if (type == kernel_h.CTA_STATUS) {
                status[0] = NetlinkMessages.networkU32(payload, "CTA_STATUS");
            } else if (type == kernel_h.CTA_TUPLE_ORIG) {
                raw[0] = payload;
                original[0] = Tuple.of(payload);
            }
        });
        if (original[0] == null || original[0].destination() == null || (status[0] & kernel_h.IPS_DST_NAT) != 0) {
            return null;
        }
        return new Untranslated(original[0], raw[0]);
    }

    private static boolean isLoopback(byte[] address) {
        try {
            return InetAddress.getByAddress(address).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }

    /**
     * A dump of one family's entries with none of the status bits {@code unwanted} (CTA_STATUS 0
     * under that mask), of {@code protocol} and, where given, to {@code address} and {@code port}
     * (0: any), as the kernel's tuple filter.
     */
    static MemorySegment untranslatedDump(Arena arena, int family, int protocol, InetAddress address, int port,
                                          int unwanted) {
        MemorySegment nlh = header(arena, kernel_h.IPCTNL_MSG_CT_GET, kernel_h.NLM_F_DUMP | kernel_h.NLM_F_ACK, family);
        mnl_attr_put_u32(nlh, (short) kernel_h.CTA_STATUS, 0);
        mnl_attr_put_u32(nlh, (short) kernel_h.CTA_STATUS_MASK, Integer.reverseBytes(unwanted));
        int flags = kernel_h.CTA_FILTER_F_CTA_PROTO_NUM;
        MemorySegment tuple = mnl_attr_nest_start(nlh, (short) kernel_h.CTA_TUPLE_ORIG);
        if (address != null) {
            flags |= kernel_h.CTA_FILTER_F_CTA_IP_DST;
            MemorySegment ip = mnl_attr_nest_start(nlh, (short) kernel_h.CTA_TUPLE_IP);
            byte[] bytes = address.getAddress();
            mnl_attr_put(nlh, (short) (bytes.length == 4 ? kernel_h.CTA_IP_V4_DST : kernel_h.CTA_IP_V6_DST),
                    bytes.length, arena.allocateFrom(JAVA_BYTE, bytes));
            mnl_attr_nest_end(nlh, ip);
        }
        MemorySegment proto = mnl_attr_nest_start(nlh, (short) kernel_h.CTA_TUPLE_PROTO);
        mnl_attr_put_u8(nlh, (short) kernel_h.CTA_PROTO_NUM, (byte) protocol);
        if (port != 0) {
            flags |= kernel_h.CTA_FILTER_F_CTA_PROTO_DST_PORT;
            mnl_attr_put_u16(nlh, (short) kernel_h.CTA_PROTO_DST_PORT, Short.reverseBytes((short) port));
        }
        mnl_attr_nest_end(nlh, proto);
        mnl_attr_nest_end(nlh, tuple);
        MemorySegment filter = mnl_attr_nest_start(nlh, (short) kernel_h.CTA_FILTER);
        mnl_attr_put_u32(nlh, (short) kernel_h.CTA_FILTER_ORIG_FLAGS, flags);
        mnl_attr_nest_end(nlh, filter);
        return nlh;
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
