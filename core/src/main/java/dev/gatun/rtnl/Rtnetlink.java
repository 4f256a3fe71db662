package dev.gatun.rtnl;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.ifaddrmsg;
import dev.gatun.bindings.internal.ifinfomsg;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.nlmsghdr;
import dev.gatun.bindings.internal.rtmsg;
import dev.gatun.InetText;
import dev.gatun.internal.Libc;
import dev.gatun.netlink.NetlinkException;
import dev.gatun.netlink.NetlinkMessages;
import dev.gatun.netlink.NetlinkProtocol;
import dev.gatun.netlink.NetlinkSocket;
import dev.gatun.netlink.Operations;
import dev.gatun.netns.NetworkNamespace;

import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Links, addresses and routes of one network namespace over rtnetlink, with no {@code ip}
 * binary. Every input is checked before a message is sent; kernel errors name the operation.
 * Not thread-safe across calls that must be ordered; the socket serialises single calls.
 */
public final class Rtnetlink implements AutoCloseable {

    private final NetlinkSocket socket;

    private Rtnetlink(NetlinkSocket socket) {
        this.socket = socket;
    }

    public static Rtnetlink open(NetworkNamespace namespace) {
        return new Rtnetlink(NetlinkSocket.open(NetlinkProtocol.ROUTE, namespace));
    }

    public NetworkNamespace namespace() {
        return socket.namespace();
    }

    // ------------------------------------------------------------------ links

    /**
     * Creates a bridge with STP off. The MAC is set in the creating request, so the kernel marks
     * it as assigned (addr_assign_type 3) and never replaces it with a port's address.
     */
    public Link createBridge(String name, MacAddress mac, Integer mtu) {
        InterfaceNames.check(name);
        MacAddress address = mac == null ? MacAddress.randomLocal() : mac;
        checkMtu(mtu);
        try (RtnlRequest r = newLink("create bridge " + name)) {
            r.string(kernel_h.IFLA_IFNAME, name).bytes(kernel_h.IFLA_ADDRESS, address.toBytes());
            if (mtu != null) {
                r.u32(kernel_h.IFLA_MTU, mtu);
            }
            r.begin(kernel_h.IFLA_LINKINFO).string(kernel_h.IFLA_INFO_KIND, "bridge")
                    .begin(kernel_h.IFLA_INFO_DATA).u32(kernel_h.IFLA_BR_STP_STATE, 0).end()
                    .end();
            execute(r);
        }
        return link(name);
    }

    /**
     * Creates a bridge the way a plain {@code ip link add type bridge} does: without a MAC, so the
     * kernel lets it follow its ports. Only for showing the floating-MAC problem.
     */
    public Link createBridgeWithoutMac(String name) {
        InterfaceNames.check(name);
        try (RtnlRequest r = newLink("create bridge " + name)) {
            r.string(kernel_h.IFLA_IFNAME, name)
                    .begin(kernel_h.IFLA_LINKINFO).string(kernel_h.IFLA_INFO_KIND, "bridge").end();
            execute(r);
        }
        return link(name);
    }

    /**
     * Creates a veth pair: {@code name} here, {@code peerName} created directly in
     * {@code peerNamespace} under its final name. Each end gets its MAC (random when null).
     */
    public Link createVeth(String name, MacAddress mac, String peerName, MacAddress peerMac,
                           NetworkNamespace peerNamespace, Integer mtu) {
        InterfaceNames.check(name);
        InterfaceNames.check(peerName);
        checkMtu(mtu);
        MacAddress hostMac = mac == null ? MacAddress.randomLocal() : mac;
        MacAddress otherMac = peerMac == null ? MacAddress.randomLocal() : peerMac;
        String where = peerNamespace == null ? "" : " in " + peerNamespace.describe();
        int nsFd = peerNamespace == null ? -1 : Libc.open(peerNamespace.path().toString(), libc_h.O_RDONLY);
        try (RtnlRequest r = newLink("create veth " + name + " with peer " + peerName + where)) {
            r.string(kernel_h.IFLA_IFNAME, name).bytes(kernel_h.IFLA_ADDRESS, hostMac.toBytes());
            if (mtu != null) {
                r.u32(kernel_h.IFLA_MTU, mtu);
            }
            r.begin(kernel_h.IFLA_LINKINFO).string(kernel_h.IFLA_INFO_KIND, "veth")
                    .begin(kernel_h.IFLA_INFO_DATA).begin(kernel_h.VETH_INFO_PEER);
            MemorySegment peer = r.inlineHeader(ifinfomsg.sizeof());
            ifinfomsg.ifi_family(peer, (byte) libc_h.AF_UNSPEC);
            r.string(kernel_h.IFLA_IFNAME, peerName).bytes(kernel_h.IFLA_ADDRESS, otherMac.toBytes());
            if (mtu != null) {
                r.u32(kernel_h.IFLA_MTU, mtu);
            }
            if (nsFd >= 0) {
                r.u32(kernel_h.IFLA_NET_NS_FD, nsFd);
            }
            r.end().end().end();
            execute(r);
        } finally {
            if (nsFd >= 0) {
                Libc.close(nsFd);
            }
        }
        return link(name);
    }

    /** Creates a dummy interface (needs the kernel's dummy driver). */
    public Link createDummy(String name, MacAddress mac) {
        InterfaceNames.check(name);
        try (RtnlRequest r = newLink("create dummy " + name)) {
            r.string(kernel_h.IFLA_IFNAME, name);
            if (mac != null) {
                r.bytes(kernel_h.IFLA_ADDRESS, mac.toBytes());
            }
            r.begin(kernel_h.IFLA_LINKINFO).string(kernel_h.IFLA_INFO_KIND, "dummy").end();
            execute(r);
        }
        return link(name);
    }

    /** Deletes a link; deleting either end of a veth pair deletes both. */
    public void delete(String name) {
        Link l = link(name);
        try (RtnlRequest r = new RtnlRequest("delete link " + name, kernel_h.RTM_DELLINK, 0, ifinfomsg.sizeof())) {
            ifinfomsg.ifi_index(r.header(), l.index());
            execute(r);
        }
    }

    public void setUp(String name, boolean up) {
        Link l = link(name);
        try (RtnlRequest r = new RtnlRequest("set link " + name + (up ? " up" : " down"), kernel_h.RTM_NEWLINK, 0,
                ifinfomsg.sizeof())) {
            ifinfomsg.ifi_index(r.header(), l.index());
            ifinfomsg.ifi_flags(r.header(), up ? kernel_h.IFF_UP : 0);
            ifinfomsg.ifi_change(r.header(), kernel_h.IFF_UP);
            execute(r);
        }
    }

    public void setMtu(String name, int mtu) {
        checkMtu(mtu);
        modify(name, "set mtu " + mtu + " on link " + name, r -> r.u32(kernel_h.IFLA_MTU, mtu));
    }

    /** Attaches {@code name} to the bridge {@code master}, or detaches it when master is null. */
    public void setMaster(String name, String master) {
        int index = master == null ? 0 : link(master).index();
        modify(name, master == null ? "detach link " + name : "attach link " + name + " to " + master,
                r -> r.u32(kernel_h.IFLA_MASTER, index));
    }

    /**
     * Sets a bridge port's flags: hairpin (a frame may leave by the port it came in on) and
     * isolated (the port talks only to non-isolated ports).
     */
    public void setBridgePortFlags(String port, boolean hairpin, boolean isolated) {
        Link l = link(port);
        try (RtnlRequest r = new RtnlRequest("set bridge port flags of " + port, kernel_h.RTM_SETLINK, 0,
                ifinfomsg.sizeof())) {
            ifinfomsg.ifi_family(r.header(), (byte) libc_h.AF_BRIDGE);
            ifinfomsg.ifi_index(r.header(), l.index());
            r.begin(kernel_h.IFLA_PROTINFO | kernel_h.NLA_F_NESTED)
                    .u8(kernel_h.IFLA_BRPORT_MODE, hairpin ? 1 : 0)
                    .u8(kernel_h.IFLA_BRPORT_ISOLATED, isolated ? 1 : 0)
                    .end();
            execute(r);
        }
    }

    public void rename(String name, String newName) {
        InterfaceNames.check(newName);
        modify(name, "rename link " + name + " to " + newName, r -> r.string(kernel_h.IFLA_IFNAME, newName));
    }

    /** Sets the interface alias, where gatun keeps metadata that other processes can read. */
    public void setAlias(String name, String alias) {
        if (alias.getBytes(StandardCharsets.UTF_8).length >= kernel_h.IFALIASZ) {
            throw new InvalidInputException("alias for " + name + " is longer than " + (kernel_h.IFALIASZ - 1) + " bytes");
        }
        modify(name, "set alias of link " + name, r -> r.string(kernel_h.IFLA_IFALIAS, alias));
    }

    /** Moves a link into another namespace; it disappears from this one. */
    public void moveTo(String name, NetworkNamespace target) {
        int fd = Libc.open(target.path().toString(), libc_h.O_RDONLY);
        try {
            modify(name, "move link " + name + " to " + target.describe(), r -> r.u32(kernel_h.IFLA_NET_NS_FD, fd));
        } finally {
            Libc.close(fd);
        }
    }

    /** The link with this name; an InvalidInputException naming it if there is none. */
    public Link link(String name) {
        return find(name).orElseThrow(() -> new InvalidInputException("no link named " + name + " in "
                + namespace().describe()));
    }

    public Optional<Link> find(String name) {
        InterfaceNames.check(name);
        try (RtnlRequest r = new RtnlRequest("get link " + name, kernel_h.RTM_GETLINK, 0, ifinfomsg.sizeof())) {
            r.string(kernel_h.IFLA_IFNAME, name);
            return get(r, LinkDecoder::decode);
        }
    }

    public Optional<Link> find(int index) {
        try (RtnlRequest r = new RtnlRequest("get link " + index, kernel_h.RTM_GETLINK, 0, ifinfomsg.sizeof())) {
            ifinfomsg.ifi_index(r.header(), index);
            return get(r, LinkDecoder::decode);
        }
    }

    /** Every link of the namespace. */
    public List<Link> links() {
        try (RtnlRequest r = new RtnlRequest("list links", kernel_h.RTM_GETLINK, kernel_h.NLM_F_DUMP, ifinfomsg.sizeof())) {
            return socket.dump(r.message(), r.length(), r.operation, LinkDecoder::decode);
        }
    }

    /**
     * The links of one kind ("bridge", "veth"), filtered by the kernel as {@code ip link show
     * type KIND} asks: among thousands of other links the answer is one datagram, so links
     * created or deleted meanwhile rarely interrupt the dump (a dump of every link is
     * interrupted by any such change, again and again while they come in a flood). A kernel
     * that does not filter answers with every link; the caller looks at the kind it needs anyway.
     */
    public List<Link> links(String kind) {
        try (RtnlRequest r = new RtnlRequest("list links of kind " + kind, kernel_h.RTM_GETLINK, kernel_h.NLM_F_DUMP,
                ifinfomsg.sizeof())) {
            r.begin(kernel_h.IFLA_LINKINFO).string(kernel_h.IFLA_INFO_KIND, kind).end();
            return socket.dump(r.message(), r.length(), r.operation, LinkDecoder::decode);
        }
    }

    // ------------------------------------------------------------------ addresses

    public void addAddress(String link, Prefix address) {
        address(kernel_h.RTM_NEWADDR, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL, "add address " + address + " to " + link,
                link, address);
    }

    public void deleteAddress(String link, Prefix address) {
        address(kernel_h.RTM_DELADDR, 0, "delete address " + address + " from " + link, link, address);
    }

    /** Every address of the namespace, or of one link. */
    public List<InterfaceAddress> addresses(String link) {
        int index = link == null ? 0 : link(link).index();
        try (RtnlRequest r = new RtnlRequest("list addresses", kernel_h.RTM_GETADDR, kernel_h.NLM_F_DUMP,
                ifaddrmsg.sizeof())) {
            List<InterfaceAddress> all = socket.dump(r.message(), r.length(), r.operation,
                    AddressDecoder::decode);
            return index == 0 ? all : all.stream().filter(a -> a.index() == index).toList();
        }
    }

    private void address(int type, int flags, String operation, String link, Prefix address) {
        int index = link(link).index();
        try (RtnlRequest r = new RtnlRequest(operation, type, flags, ifaddrmsg.sizeof())) {
            MemorySegment h = r.header();
            ifaddrmsg.ifa_family(h, (byte) (address.isIpv6() ? libc_h.AF_INET6 : libc_h.AF_INET));
            ifaddrmsg.ifa_prefixlen(h, (byte) address.length());
            ifaddrmsg.ifa_scope(h, (byte) kernel_h.RT_SCOPE_UNIVERSE);
            ifaddrmsg.ifa_index(h, index);
            byte[] a = address.address().getAddress();
            r.bytes(kernel_h.IFA_LOCAL, a).bytes(kernel_h.IFA_ADDRESS, a);
            if (address.isIpv6() && type == kernel_h.RTM_NEWADDR) {
                // No duplicate address detection: a container's address is usable at once.
                r.u32(kernel_h.IFA_FLAGS, kernel_h.IFA_F_NODAD);
            }
            execute(r);
        }
    }

    // ------------------------------------------------------------------ routes

    /** Adds the default route of the address family of {@code gateway}, through it. */
    public void addDefaultRoute(InetAddress gateway, String link) {
        route(kernel_h.RTM_NEWROUTE, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL, null, gateway, link);
    }

    public void deleteDefaultRoute(InetAddress gateway, String link) {
        route(kernel_h.RTM_DELROUTE, 0, null, gateway, link);
    }

    /** Adds a route to {@code destination}, through {@code gateway} or (null) straight out of {@code link}. */
    public void addRoute(Prefix destination, InetAddress gateway, String link) {
        route(kernel_h.RTM_NEWROUTE, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL, destination, gateway, link);
    }

    public void deleteRoute(Prefix destination, InetAddress gateway, String link) {
        route(kernel_h.RTM_DELROUTE, 0, destination, gateway, link);
    }

    /** The routes of the main table. */
    public List<Route> routes() {
        try (RtnlRequest r = new RtnlRequest("list routes", kernel_h.RTM_GETROUTE, kernel_h.NLM_F_DUMP, rtmsg.sizeof())) {
            return socket.dump(r.message(), r.length(), r.operation, RouteDecoder::decode)
                    .stream().filter(rt -> rt != null && rt.table() == kernel_h.RT_TABLE_MAIN).toList();
        }
    }

    private void route(int type, int flags, Prefix destination, InetAddress gateway, String link) {
        if (destination == null && gateway == null) {
            throw new InvalidInputException("a default route needs a gateway");
        }
        boolean v6 = destination != null ? destination.isIpv6() : !(gateway instanceof Inet4Address);
        if (gateway != null && (gateway instanceof Inet4Address) == v6) {
            throw new InvalidInputException("gateway " + InetText.of(gateway) + " is not of the family of "
                    + (destination == null ? "the route" : destination));
        }
        String what = (destination == null ? "default route" : "route to " + destination.network())
                + (gateway == null ? "" : " via " + InetText.of(gateway)) + (link == null ? "" : " dev " + link);
        int index = link == null ? 0 : link(link).index();
        try (RtnlRequest r = new RtnlRequest((type == kernel_h.RTM_NEWROUTE ? "add " : "delete ") + what, type, flags,
                rtmsg.sizeof())) {
            MemorySegment h = r.header();
            rtmsg.rtm_family(h, (byte) (v6 ? libc_h.AF_INET6 : libc_h.AF_INET));
            rtmsg.rtm_dst_len(h, (byte) (destination == null ? 0 : destination.length()));
            rtmsg.rtm_table(h, (byte) kernel_h.RT_TABLE_MAIN);
            if (type == kernel_h.RTM_NEWROUTE) {
                rtmsg.rtm_protocol(h, (byte) kernel_h.RTPROT_BOOT);
                rtmsg.rtm_scope(h, (byte) (gateway == null ? kernel_h.RT_SCOPE_LINK : kernel_h.RT_SCOPE_UNIVERSE));
                rtmsg.rtm_type(h, (byte) kernel_h.RTN_UNICAST);
            } else {
                rtmsg.rtm_scope(h, (byte) kernel_h.RT_SCOPE_NOWHERE);
            }
            if (destination != null) {
                r.bytes(kernel_h.RTA_DST, destination.network().address().getAddress());
            }
            if (gateway != null) {
                r.bytes(kernel_h.RTA_GATEWAY, gateway.getAddress());
            }
            if (index != 0) {
                r.u32(kernel_h.RTA_OIF, index);
            }
            execute(r);
        }
    }

    // ------------------------------------------------------------------ plumbing

    private RtnlRequest newLink(String operation) {
        RtnlRequest r = new RtnlRequest(operation, kernel_h.RTM_NEWLINK, kernel_h.NLM_F_CREATE | kernel_h.NLM_F_EXCL,
                ifinfomsg.sizeof());
        ifinfomsg.ifi_family(r.header(), (byte) libc_h.AF_UNSPEC);
        return r;
    }

    private void modify(String name, String operation, Consumer<RtnlRequest> attributes) {
        Link l = link(name);
        try (RtnlRequest r = new RtnlRequest(operation, kernel_h.RTM_NEWLINK, 0, ifinfomsg.sizeof())) {
            ifinfomsg.ifi_index(r.header(), l.index());
            attributes.accept(r);
            execute(r);
        }
    }

    private void execute(RtnlRequest r) {
        int seq = socket.reserveSequences(1);
        nlmsghdr.nlmsg_flags(r.message(), (short) (nlmsghdr.nlmsg_flags(r.message()) | kernel_h.NLM_F_ACK));
        nlmsghdr.nlmsg_seq(r.message(), seq);
        socket.transact(r.message(), r.length(), seq, Operations.of(r.operation),
                NetlinkSocket.AckedRange.only(0), null);
    }

    private <T> Optional<T> get(RtnlRequest r, Function<MemorySegment, T> decode) {
        int seq = socket.reserveSequences(1);
        nlmsghdr.nlmsg_flags(r.message(), (short) (nlmsghdr.nlmsg_flags(r.message()) | kernel_h.NLM_F_ACK));
        nlmsghdr.nlmsg_seq(r.message(), seq);
        List<T> found = new ArrayList<>();
        try {
            socket.transact(r.message(), r.length(), seq, Operations.of(r.operation),
                    NetlinkSocket.AckedRange.only(0), m -> found.add(decode.apply(m)));
        } catch (NetlinkException e) {
            if (e.isNoSuchDevice() || e.isNotFound()) {
                return Optional.empty();
            }
            throw e;
        }
        return found.stream().findFirst();
    }

    private static void checkMtu(Integer mtu) {
        if (mtu != null && (mtu < 68 || mtu > 65535)) {
            throw new InvalidInputException("MTU " + mtu + " is out of range 68-65535");
        }
    }

    static InetAddress inet(byte[] b) {
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new GatunException("the kernel reported an address of " + b.length + " bytes", e);
        }
    }

    static int attributesStart(long familyHeader) {
        return NetlinkMessages.align(NetlinkMessages.HEADER_BYTES + (int) familyHeader);
    }

    @Override
    public void close() {
        socket.close();
    }
}
