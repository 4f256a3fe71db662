package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Specs;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The two holders that cli/README.md ("Host ports in use") says a publish does not ask about: a
 * socket bound to a device (SO_BINDTODEVICE) and an SCTP socket. Each beside its control, the
 * same listener without the device or on TCP, which is refused. The listeners are processes of
 * their own (python3's socket module sets SO_BINDTODEVICE, which Java's channels cannot), made
 * inside the test's namespace.
 */
@ExtendWith(FreshNamespaces.class)
class HostPortsNotAskedTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");
    private static final Duration STOP = Duration.ofSeconds(30);

    @Test
    void aListenerBoundToADeviceDoesNotHoldItsPort(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = Specs.withNetwork(Gatun.open(host, "nftables"));
             Listener onDevice = Listener.start(host, "tcp", 8080, "lo");
             Listener anywhere = Listener.start(host, "tcp", 8081, null)) {
            assertThat(gatun.publish(new PortRequest("n1", C1, ports("8080:80"), "web"))).as("over a listener bound to lo").hasSize(1);
            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, ports("8081:81"), "web")))
                    .as("the control: the same listener bound to no device").isInstanceOf(ConflictException.class)
                    .hasMessageContaining("*:8081/tcp is in use on the host").hasMessageContaining("python3 (pid " + anywhere.pid() + ")");
        }
    }

    @Test
    void anSctpListenerDoesNotHoldItsPort(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = Specs.withNetwork(Gatun.open(host, "nftables"))) {
            Listener sctp;
            try {
                sctp = Listener.start(host, "sctp", 9090, null);
            } catch (NoSctp e) {
                // This machine's kernel (no sctp module, no modprobe) refuses SCTP sockets; the check is then never reached.
                Assumptions.abort("the kernel refuses SCTP sockets here: " + e.getMessage());
                return;
            }
            try (sctp; Listener tcp = Listener.start(host, "tcp", 9091, null)) {
                assertThat(gatun.publish(new PortRequest("n1", C1, ports("9090:90/sctp"), "web"))).as("over an SCTP listener").hasSize(1);
                assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, ports("9091:91/tcp"), "web")))
                        .as("the control: the same listener on TCP").isInstanceOf(ConflictException.class)
                        .hasMessageContaining("*:9091/tcp is in use on the host");
            }
        }
    }

    /**
     * Shown on any kernel, SCTP or not: a publish asks the host's sockets through a sock_diag
     * socket, opened in the namespace at the first publish that asks and kept. An SCTP publish
     * opens none; the control, a TCP publish, does (the namespace's /proc/net/netlink lists it).
     */
    @Test
    void anSctpPublishSendsNoSocketQuestion(NetworkNamespace host) {
        try (GatunDriver gatun = Specs.withNetwork(Gatun.open(host, "nftables"))) {
            assertThat(sockDiagSockets(host)).as("sock_diag sockets before any publish").isZero();
            assertThat(gatun.publish(new PortRequest("n1", C1, ports("9090:90/sctp"), "web"))).hasSize(1);
            assertThat(sockDiagSockets(host)).as("sock_diag sockets after an SCTP publish").isZero();
            assertThat(gatun.publish(new PortRequest("n1", C1, ports("9091:91/tcp"), "web"))).hasSize(1);
            assertThat(sockDiagSockets(host)).as("the control: after a TCP publish").isPositive();
        }
    }

    /** The sock_diag (NETLINK_SOCK_DIAG, protocol 4) sockets of processes in {@code ns}, from its /proc/net/netlink. */
    private static long sockDiagSockets(NetworkNamespace ns) {
        // Columns: sk Eth Pid Groups ...; Eth is the netlink protocol, Pid 0 the kernel's own end.
        return Oracle.in(ns, "cat", "/proc/net/netlink").lines().skip(1).map(l -> l.trim().split("\\s+"))
                .filter(f -> f.length > 2 && f[1].equals("4") && !f[2].equals("0")).count();
    }

    /** The kernel has no SCTP. */
    private static final class NoSctp extends Exception {
        NoSctp(String why) {
            super(why);
        }
    }

    /** A python3 listener on the wildcard of both families inside a namespace, until closed. */
    private record Listener(Process process) implements AutoCloseable {

        private static final String SCRIPT = """
                import socket, sys
                proto, port, device = sys.argv[1], int(sys.argv[2]), sys.argv[3]
                try:
                    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM,
                                      socket.IPPROTO_SCTP if proto == 'sctp' else socket.IPPROTO_TCP)
                except OSError as e:
                    print('unsupported', e, flush=True)
                    sys.exit(3)
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                if device:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, device.encode())
                s.bind(('::', port))
                s.listen(8)
                print('listening', flush=True)
                sys.stdin.read()
                """;

        static Listener start(NetworkNamespace ns, String proto, int port, String device) throws IOException, NoSctp {
            Process p = new ProcessBuilder("nsenter", "--net=" + ns.path(), "/usr/bin/python3", "-c", SCRIPT, proto,
                    Integer.toString(port), device == null ? "" : device).redirectErrorStream(true).start();
            String first = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
            if (first != null && first.startsWith("unsupported") && proto.equals("sctp")) {
                Bounded.waitFor(p, STOP, "python3");
                throw new NoSctp(first);
            }
            if (!"listening".equals(first)) {
                p.destroyForcibly();
                throw new AssertionError("python3 did not listen on " + proto + " " + port + ": " + first);
            }
            return new Listener(p);
        }

        long pid() {
            return process.pid();
        }

        @Override
        public void close() throws IOException {
            process.getOutputStream().close(); // its stdin ends: it exits
            Bounded.waitFor(process, STOP, "python3 listener");
        }
    }
}
