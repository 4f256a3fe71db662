package dev.gatun.testing;

import dev.gatun.bindings.internal.CallState;
import dev.gatun.bindings.internal.iovec;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.bindings.internal.msghdr;
import dev.gatun.bindings.internal.sockaddr_ll;
import dev.gatun.internal.Errno;
import dev.gatun.internal.Libc;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Rtnetlink;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Ethernet frames written byte by byte and sent with an AF_PACKET socket, the way an attacker on
 * the LAN or a container with CAP_NET_RAW sends them: nothing routes, checks or rewrites them on
 * the sending side, so a frame may carry any source and any destination (127.0.0.1 included) to
 * any MAC. Each carries one UDP datagram whose payload a test looks for on the receiving side.
 */
public final class CraftedFrames {

    private CraftedFrames() {}

    /** Where a frame goes: out of {@code ifname} of {@code from}, to the link-layer address {@code toMac}. */
    public record Wire(NetworkNamespace from, String ifname, MacAddress toMac) {

        /** Out of {@code ifname} to the MAC of {@code peer}'s interface {@code peerIfname} (the host's, a bridge's). */
        public static Wire to(NetworkNamespace from, String ifname, NetworkNamespace peer, String peerIfname) {
            try (Rtnetlink rt = Rtnetlink.open(peer)) {
                return new Wire(from, ifname, rt.link(peerIfname).mac());
            }
        }
    }

    /** Sends one frame with a UDP datagram from {@code source}:{@code sourcePort} to {@code target}:{@code port}. */
    public static void udp(Wire wire, InetAddress source, int sourcePort, InetAddress target, int port, String payload) {
        if ((source instanceof Inet4Address) != (target instanceof Inet4Address)) {
            throw new IllegalArgumentException("source " + source + " and target " + target + " are of two families");
        }
        byte[] data = payload.getBytes(StandardCharsets.UTF_8);
        byte[] packet = source instanceof Inet4Address
                ? ipv4(source, target, udp(source, sourcePort, target, port, data))
                : ipv6(source, target, udp(source, sourcePort, target, port, data));
        wire.from().run(() -> send(wire, source instanceof Inet6Address ? kernel_h.ETH_P_IPV6 : kernel_h.ETH_P_IP, packet));
    }

    private static void send(Wire wire, int etherType, byte[] packet) {
        Link out;
        try (Rtnetlink rt = Rtnetlink.open(wire.from())) {
            out = rt.link(wire.ifname());
        }
        ByteBuffer frame = ByteBuffer.allocate(14 + packet.length);
        frame.put(wire.toMac().toBytes()).put(out.mac().toBytes()).putShort((short) etherType).put(packet);
        int fd = Libc.socket(libc_h.AF_PACKET, libc_h.SOCK_RAW | libc_h.SOCK_CLOEXEC, 0);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment to = sockaddr_ll.allocate(arena);
            sockaddr_ll.sll_family(to, (short) libc_h.AF_PACKET);
            sockaddr_ll.sll_protocol(to, Short.reverseBytes((short) etherType));
            sockaddr_ll.sll_ifindex(to, out.index());
            sockaddr_ll.sll_halen(to, (byte) 6);
            MemorySegment.copy(wire.toMac().toBytes(), 0, sockaddr_ll.sll_addr(to), JAVA_BYTE, 0, 6);
            MemorySegment bytes = arena.allocateFrom(JAVA_BYTE, frame.array());
            MemorySegment iov = iovec.allocate(arena);
            iovec.iov_base(iov, bytes);
            iovec.iov_len(iov, bytes.byteSize());
            MemorySegment msg = msghdr.allocate(arena);
            msghdr.msg_name(msg, to);
            msghdr.msg_namelen(msg, (int) sockaddr_ll.sizeof());
            msghdr.msg_iov(msg, iov);
            msghdr.msg_iovlen(msg, 1);
            MemorySegment state = CallState.allocate(arena);
            long sent = libc_h.sendmsg(state, fd, msg, 0);
            if (sent != bytes.byteSize()) {
                throw new IllegalStateException("send a crafted frame out of " + wire.ifname() + " in "
                        + wire.from().describe() + ": " + (sent < 0 ? Errno.name(CallState.errno(state)) : sent + " bytes sent"));
            }
        } finally {
            Libc.close(fd);
        }
    }

    private static byte[] udp(InetAddress source, int sourcePort, InetAddress target, int port, byte[] data) {
        ByteBuffer u = ByteBuffer.allocate(8 + data.length);
        u.putShort((short) sourcePort).putShort((short) port).putShort((short) (8 + data.length)).putShort((short) 0).put(data);
        byte[] segment = u.array();
        // The checksum over the pseudo-header: IPv6 requires one, and IPv4 takes it as well.
        ByteArrayOutputStream pseudo = new ByteArrayOutputStream();
        pseudo.writeBytes(source.getAddress());
        pseudo.writeBytes(target.getAddress());
        if (source instanceof Inet4Address) {
            pseudo.writeBytes(new byte[] {0, (byte) libc_h.IPPROTO_UDP, (byte) (segment.length >> 8), (byte) segment.length});
        } else {
            pseudo.writeBytes(new byte[] {0, 0, (byte) (segment.length >> 8), (byte) segment.length, 0, 0, 0,
                    (byte) libc_h.IPPROTO_UDP});
        }
        pseudo.writeBytes(segment);
        int sum = checksum(pseudo.toByteArray());
        if (sum == 0) {
            sum = 0xffff;
        }
        segment[6] = (byte) (sum >> 8);
        segment[7] = (byte) sum;
        return segment;
    }

    private static byte[] ipv4(InetAddress source, InetAddress target, byte[] udp) {
        ByteBuffer h = ByteBuffer.allocate(20 + udp.length);
        h.put((byte) 0x45).put((byte) 0).putShort((short) (20 + udp.length)).putShort((short) 0x4242)
                .putShort((short) 0x4000).put((byte) 64).put((byte) libc_h.IPPROTO_UDP).putShort((short) 0)
                .put(source.getAddress()).put(target.getAddress());
        byte[] out = h.array();
        int sum = checksum(java.util.Arrays.copyOf(out, 20));
        out[10] = (byte) (sum >> 8);
        out[11] = (byte) sum;
        System.arraycopy(udp, 0, out, 20, udp.length);
        return out;
    }

    private static byte[] ipv6(InetAddress source, InetAddress target, byte[] udp) {
        ByteBuffer h = ByteBuffer.allocate(40 + udp.length);
        h.putInt(0x60000000).putShort((short) udp.length).put((byte) libc_h.IPPROTO_UDP).put((byte) 64)
                .put(source.getAddress()).put(target.getAddress()).put(udp);
        return h.array();
    }

    /** The Internet checksum (RFC 1071) of {@code bytes}. */
    static int checksum(byte[] bytes) {
        long sum = 0;
        for (int i = 0; i + 1 < bytes.length; i += 2) {
            sum += ((bytes[i] & 0xff) << 8) | (bytes[i + 1] & 0xff);
        }
        if (bytes.length % 2 == 1) {
            sum += (bytes[bytes.length - 1] & 0xff) << 8;
        }
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) (~sum & 0xffff);
    }
}
