package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kernel's own answer about real sockets: Java channels opened inside a fresh namespace (a
 * socket keeps the namespace it was made in), each of a known family, address and port.
 */
@ExtendWith(FreshNamespaces.class)
class HostSocketsTest {

    private static final int TCP = libc_h.IPPROTO_TCP;
    private static final int UDP = libc_h.IPPROTO_UDP;

    @Test
    void findsListenersAndBoundUdpSocketsOfItsNamespaceOnly(NetworkNamespace ns) throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(ns)) {
            rt.setUp("lo", true);
        }
        try (ServerSocketChannel v4 = ns.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET)
                .bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 8080)));
             ServerSocketChannel dual = ns.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                     .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 8081)));
             ServerSocketChannel notListening = ns.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET));
             DatagramChannel udp = ns.call(() -> DatagramChannel.open(StandardProtocolFamily.INET)
                     .bind(new InetSocketAddress(InetAddress.ofLiteral("0.0.0.0"), 5353)));
             HostSockets sockets = HostSockets.open(ns)) {
            assertThat(notListening.isOpen()).isTrue();

            List<BoundSocket> tcp = sockets.holding(TCP, List.of(8080, 8081, 9000), true);
            assertThat(tcp).extracting(BoundSocket::endpoint).containsExactlyInAnyOrder("127.0.0.1:8080", "[::]:8081");
            BoundSocket onV6 = tcp.stream().filter(s -> s.port() == 8081).findFirst().orElseThrow();
            assertThat(onV6.ipv6()).isTrue();
            assertThat(onV6.v6only()).as("Java's IPv6 sockets take IPv4 too").isFalse();
            assertThat(onV6.holds(true, null)).isTrue();
            assertThat(onV6.holds(true, InetAddress.ofLiteral("10.0.0.1"))).isTrue();
            assertThat(onV6.holds(false, InetAddress.ofLiteral("fd00::1"))).isTrue();
            BoundSocket onLoopback = tcp.stream().filter(s -> s.port() == 8080).findFirst().orElseThrow();
            assertThat(onLoopback.holds(true, null)).isTrue();
            assertThat(onLoopback.holds(true, InetAddress.ofLiteral("127.0.0.1"))).isTrue();
            assertThat(onLoopback.holds(true, InetAddress.ofLiteral("10.0.0.1"))).isFalse();
            assertThat(onLoopback.holds(false, null)).isFalse();

            // The kernel's filter, unaided: one port, several, a range.
            assertThat(sockets.dump(TCP, true, List.of(8081), 8081, 8081)).extracting(BoundSocket::port).containsExactly(8081);
            assertThat(sockets.dump(TCP, false, List.of(8079, 8080, 8082), 8079, 8082)).extracting(BoundSocket::port)
                    .containsExactly(8080);
            assertThat(sockets.dump(TCP, false, List.of(8079, 8082), 8079, 8082)).isEmpty();
            assertThat(sockets.dump(TCP, true, null, 8082, 9000)).isEmpty();
            assertThat(sockets.dump(TCP, true, null, 8081, 9000)).extracting(BoundSocket::port).containsExactly(8081);

            // Only IPv6 sockets when only IPv6 is asked about.
            assertThat(sockets.holding(TCP, List.of(8080, 8081), false)).extracting(BoundSocket::port).containsExactly(8081);
            // A UDP socket is found by the UDP query only, a listener by the TCP query only.
            assertThat(sockets.holding(UDP, List.of(8080, 5353), true)).extracting(BoundSocket::endpoint)
                    .containsExactly("0.0.0.0:5353");
            assertThat(sockets.holding(TCP, List.of(5353), true)).isEmpty();
            // A range, and a port list longer than the kernel's filter takes (picked out here).
            assertThat(sockets.holdingRange(TCP, 8000, 8080)).extracting(BoundSocket::port).containsExactly(8080);
            assertThat(sockets.holding(TCP, IntStream.rangeClosed(1, 9000).boxed().toList(), true))
                    .extracting(BoundSocket::port).containsExactlyInAnyOrder(8080, 8081);

            // Exact lookups: the socket the kernel would hand a packet to that address and port.
            assertThat(sockets.receiving(TCP, List.of(at("127.0.0.1", 8080), at("0.0.0.0", 8080), at("127.0.0.1", 8081),
                    at("0.0.0.0", 8081), at("::1", 8081), at("127.0.0.1", 9000), at("127.0.0.1", 5353))))
                    .extracting(BoundSocket::endpoint)
                    .containsExactly("127.0.0.1:8080", "[::]:8081", "[::]:8081", "[::]:8081");
            assertThat(sockets.receiving(UDP, List.of(at("127.0.0.1", 5353), at("0.0.0.0", 5353), at("::1", 5353),
                    at("127.0.0.1", 8080)))).extracting(BoundSocket::endpoint).containsExactly("0.0.0.0:5353", "0.0.0.0:5353");
            assertThat(sockets.receiving(TCP, IntStream.rangeClosed(1, 1100).mapToObj(p -> at("127.0.0.1", 8000 + p)).toList()))
                    .extracting(BoundSocket::port).containsExactly(8080, 8081);

            // This process holds them, and /proc says so.
            Map<Long, String> owners = SocketOwners.of(Set.of(onV6.inode()));
            assertThat(owners.get(onV6.inode())).endsWith("(pid " + ProcessHandle.current().pid() + ")");
        }
    }

    private static InetSocketAddress at(String address, int port) {
        return new InetSocketAddress(InetAddress.ofLiteral(address), port);
    }

    @Test
    void seesNothingOfAnotherNamespace(NetworkNamespace ns, NetworkNamespace other) throws IOException {
        try (ServerSocketChannel listener = ns.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 8080)));
             HostSockets sockets = HostSockets.open(other)) {
            assertThat(listener.isOpen()).isTrue();
            assertThat(sockets.holding(TCP, List.of(8080), true)).isEmpty();
            assertThat(sockets.receiving(TCP, List.of(at("0.0.0.0", 8080)))).isEmpty();
        }
    }

    /**
     * An IPv6 wildcard socket with IPV6_V6ONLY (set namespace-wide through net.ipv6.bindv6only,
     * which busybox's nc follows) holds no IPv4 port; the process is named from /proc.
     */
    @Test
    void aV6OnlyListenerHoldsNoIpv4Port(NetworkNamespace ns) throws Exception {
        ns.run(() -> {
            try {
                Files.writeString(Path.of("/proc/sys/net/ipv6/bindv6only"), "1");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        Process nc = new ProcessBuilder("nsenter", "--net=" + ns.path(), "busybox", "nc", "-l", "-p", "8082")
                .redirectErrorStream(true).start();
        try (HostSockets sockets = HostSockets.open(ns)) {
            List<BoundSocket> found = List.of();
            for (int i = 0; i < 500 && found.isEmpty(); i++) {
                Thread.sleep(10);
                found = sockets.holding(TCP, List.of(8082), true);
            }
            assertThat(found).hasSize(1);
            BoundSocket s = found.getFirst();
            assertThat(s.v6only()).isTrue();
            assertThat(sockets.receiving(TCP, List.of(at("0.0.0.0", 8082)))).isEmpty();
            assertThat(sockets.receiving(TCP, List.of(at("::", 8082)))).extracting(BoundSocket::inode).containsExactly(s.inode());
            assertThat(s.holds(true, null)).isFalse();
            assertThat(s.holds(false, null)).isTrue();
            assertThat(SocketOwners.of(Set.of(s.inode())).get(s.inode())).isEqualTo("busybox (pid " + nc.pid() + ")");
        } finally {
            nc.destroy();
            Bounded.waitFor(nc, Duration.ofSeconds(30), "nc, after SIGTERM");
        }
    }
}
