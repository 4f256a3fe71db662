package dev.gatun.driver;

import dev.gatun.Gatun;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.gatun.testing.Specs.ports;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A host port handed from one container to another with {@link NetworkDriver#replace}, on the
 * kernel, with real connections from an outside namespace: new connections go to the new owner
 * from the commit on and none is refused, established ones stay with the old one; UDP's next
 * datagram goes to the new owner unless its flows are kept; {@link NetworkDriver#drain} waits
 * for the old connections to end. What replace must refuse changes nothing.
 */
@ExtendWith(FreshNamespaces.class)
class ReplaceTest {

    private static final String SUBNET = "10.88.0.0/16";

    /** Two containers on n1, each answering every line on TCP port 80 with its name. */
    private record Pair(GatunDriver gatun, Endpoint a, Endpoint b, LineServers servers) implements Closeable {
        static Pair start(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca, NetworkNamespace cb,
                          GatunDriver gatun) {
            Lab.connectOutside(host, outside, SUBNET);
            gatun.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse(SUBNET)).build());
            Endpoint a = gatun.attach(EndpointSpec.of("n1", ca));
            Endpoint b = gatun.attach(EndpointSpec.of("n1", cb));
            LineServers servers = new LineServers();
            servers.start(ca, a.ip(), "a");
            servers.start(cb, b.ip(), "b");
            return new Pair(gatun, a, b, servers);
        }

        @Override
        public void close() {
            servers.close();
            gatun.close();
        }
    }

    @Test
    void newConnectionsFollowEachReplaceWithNoneRefusedAndAnEstablishedOneStaysWithItsContainer(
            NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca, NetworkNamespace cb) throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish("n1", p.a().ip(), ports("8080:80"), "a");
            try (LongLived kept = LongLived.open(outside, Lab.HOST_ADDRESS, 8080)) {
                assertThat(kept.ask()).isEqualTo("a");
                // Owner of version v: a when v is even. Replaces started and finished, for the client's judgement.
                AtomicInteger started = new AtomicInteger();
                AtomicInteger finished = new AtomicInteger();
                ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
                AtomicInteger failed = new AtomicInteger();
                AtomicInteger answered = new AtomicInteger();
                CompletableFuture<Void> client = CompletableFuture.runAsync(() -> outside.run(() -> {
                    long end = System.nanoTime() + 10_000_000_000L;
                    while (System.nanoTime() < end) {
                        int before = finished.get();
                        String said;
                        try {
                            said = ask(Lab.HOST_ADDRESS, 8080);
                        } catch (IOException e) {
                            failed.incrementAndGet();
                            wrong.add("connection failed: " + e);
                            continue;
                        }
                        int after = started.get();
                        answered.incrementAndGet();
                        boolean mayBeA = false;
                        boolean mayBeB = false;
                        for (int v = before; v <= after; v++) {
                            mayBeA |= v % 2 == 0;
                            mayBeB |= v % 2 == 1;
                        }
                        if (!(said.equals("a") && mayBeA) && !(said.equals("b") && mayBeB)) {
                            wrong.add(said + " answered between versions " + before + " and " + after);
                        }
                        pause(5);
                    }
                }));
                List<String> keptAnswers = new ArrayList<>();
                for (int i = 1; i <= 20; i++) {
                    pause(450);
                    Endpoint to = i % 2 == 1 ? p.b() : p.a();
                    String owner = i % 2 == 1 ? "b" : "a";
                    started.incrementAndGet();
                    Replacement r = p.gatun().replace("n1", to.ip(), ports("8080:80"), owner, HostPortCheck.CHECK, false);
                    finished.incrementAndGet();
                    assertThat(r.replaced()).as("replace " + i + " took the key from the other owner")
                            .extracting(PortMapping::owner).containsExactly(i % 2 == 1 ? "a" : "b");
                    assertThat(r.published()).extracting(PortMapping::owner).containsExactly(owner);
                    keptAnswers.add(kept.ask());
                }
                Bounded.get(client, "the outside client");
                assertThat(wrong).as("connections refused, reset or answered by the wrong container").isEmpty();
                assertThat(failed.get()).isZero();
                assertThat(answered.get()).as("connections made in 10 s").isGreaterThan(500);
                assertThat(keptAnswers).as("the connection opened before the first replace, after each")
                        .hasSize(20).containsOnly("a");
            }
        }
    }

    @Test
    void udpsNextDatagramGoesToTheNewContainerUnlessItsFlowsAreKept(NetworkNamespace host, NetworkNamespace outside,
                                                                   NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"));
             ReplyServers udp = new ReplyServers()) {
            udp.udp(ca, p.a().ip().getHostAddress(), 53, "a").udp(cb, p.b().ip().getHostAddress(), 53, "b");
            p.gatun().publish("n1", p.a().ip(), ports("5353:53/udp"), "a");
            try (DatagramChannel client = ReplyServers.udpClient(outside)) {
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).isEqualTo("a");
                p.gatun().replace("n1", p.b().ip(), ports("5353:53/udp"), "b", HostPortCheck.CHECK, true);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).as("flows kept").isEqualTo("a");
                p.gatun().replace("n1", p.a().ip(), ports("5353:53/udp"), "a", HostPortCheck.CHECK, false);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353))
                        .as("back to a, b's flows were kept: the client's flow still went to a").isEqualTo("a");
                p.gatun().replace("n1", p.b().ip(), ports("5353:53/udp"), "b", HostPortCheck.CHECK, false);
                assertThat(ReplyServers.udpAsk(client, Lab.HOST_ADDRESS, 5353)).as("flows deleted").isEqualTo("b");
            }
        }
    }

    @Test
    void whatReplaceMustRefuseChangesNothing(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace ca,
                                             NetworkNamespace cb) {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish("n1", p.a().ip(), ports("8080:80"), "a");
            String before = Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4");

            assertThatThrownBy(() -> p.gatun().publish("n1", p.b().ip(), ports("8080:80"), "b"))
                    .as("without replace").isInstanceOf(ConflictException.class).hasMessageContaining("owner a");
            assertThatThrownBy(() -> p.gatun().replace("n1", p.b().ip(), ports(Lab.HOST_ADDRESS + ":8080:80"), "b",
                    HostPortCheck.CHECK, false)).as("an address-bound twin only overlaps a's key")
                    .isInstanceOf(ConflictException.class).hasMessageContaining("owner a");
            InetAddress nobody = InetAddress.ofLiteral("10.88.0.200");
            assertThatThrownBy(() -> p.gatun().replace("n1", nobody, ports("8080:80"), "c", HostPortCheck.CHECK, false))
                    .isInstanceOf(NotFoundException.class).hasMessageContaining("10.88.0.200")
                    .hasMessageContaining("nothing was changed");
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).isEqualTo(before);

            // Control: the same replace to an attached container does change it.
            p.gatun().replace("n1", p.b().ip(), ports("8080:80"), "b", HostPortCheck.CHECK, false);
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).isNotEqualTo(before)
                    .contains(p.b().ip().getHostAddress());
        }
    }

    /** The target check answers from a cache of the host's links: a veth someone deleted must be seen. */
    @Test
    void aTargetWhoseVethAnotherProcessDeletedIsRefused(NetworkNamespace host, NetworkNamespace outside,
                                                        NetworkNamespace ca, NetworkNamespace cb) {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish("n1", p.a().ip(), ports("8080:80"), "a");
            p.gatun().replace("n1", p.b().ip(), ports("8080:80"), "b", HostPortCheck.CHECK, false);
            p.gatun().replace("n1", p.a().ip(), ports("8080:80"), "a", HostPortCheck.CHECK, false);
            Oracle.in(host, "ip", "link", "del", p.b().hostIfname());
            assertThatThrownBy(() -> p.gatun().replace("n1", p.b().ip(), ports("8080:80"), "b", HostPortCheck.CHECK,
                    false)).isInstanceOf(NotFoundException.class).hasMessageContaining(p.b().ip().getHostAddress());
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains(p.a().ip().getHostAddress());
        }
    }

    @Test
    void drainWaitsForTheLastEstablishedConnectionOrSaysHowManyRemain(NetworkNamespace host, NetworkNamespace outside,
                                                                     NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb, Gatun.open(host, "nftables"))) {
            p.gatun().publish("n1", p.a().ip(), ports("8080:80", "8081:80"), "a");
            try (LongLived one = LongLived.open(outside, Lab.HOST_ADDRESS, 8080);
                 LongLived two = LongLived.open(outside, Lab.HOST_ADDRESS, 8081)) {
                assertThat(one.ask()).isEqualTo("a");
                assertThat(two.ask()).isEqualTo("a");
                List<PortMapping> removed = p.gatun().unpublish("n1", p.a().ip(), List.of(), "a");
                assertThatThrownBy(() -> outside.call(() -> ask(Lab.HOST_ADDRESS, 8080))).as("no new connection")
                        .hasRootCauseInstanceOf(ConnectException.class);
                assertThat(one.ask()).as("an established one goes on").isEqualTo("a");

                assertThat(p.gatun().drain(removed, Duration.ofMillis(300))).as("both still open at the timeout")
                        .isEqualTo(2);
                one.close();
                CompletableFuture<Long> drained = CompletableFuture.supplyAsync(() -> {
                    int left = p.gatun().drain(removed, Duration.ofSeconds(20));
                    assertThat(left).isZero();
                    return System.nanoTime();
                });
                pause(500);
                assertThat(drained).as("one connection still open").isNotDone();
                long closed = System.nanoTime();
                two.close();
                long returned = Bounded.get(drained, "the drain");
                assertThat(Duration.ofNanos(returned - closed)).as("from the last close to the drain's return")
                        .isLessThan(Duration.ofMillis(100));
            }
        }
    }

    @Test
    void aSelfHealingDriverKeepsTheNewOwnersMappingAfterAReplace(NetworkNamespace host, NetworkNamespace outside,
                                                                NetworkNamespace ca, NetworkNamespace cb)
            throws Exception {
        try (Pair p = Pair.start(host, outside, ca, cb,
                SelfHealingDriver.start(Gatun.open(host, "nftables"), m -> { }, 0, 100))) {
            SelfHealingDriver d = (SelfHealingDriver) p.gatun();
            d.publish("n1", p.a().ip(), ports("8080:80"), "a");
            d.replace("n1", p.b().ip(), ports("8080:80"), "b", HostPortCheck.CHECK, false);
            assertThat(d.wanted()).extracting(PortMapping::owner).containsExactly("b");
            // Damage elsewhere makes it repair: the replaced mapping must not come back.
            Oracle.in(host, "nft", "flush", "map", "inet", "gatun", "ports4");
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (!Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4").contains("8080")
                    && System.nanoTime() < deadline) {
                pause(20);
            }
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4"))
                    .contains(p.b().ip().getHostAddress()).doesNotContain(p.a().ip().getHostAddress());
            try (LongLived c = LongLived.open(outside, Lab.HOST_ADDRESS, 8080)) {
                assertThat(c.ask()).isEqualTo("b");
            }
        }
    }

    /** One short connection: a line sent, the line answered. */
    private static String ask(String address, int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), 2000);
            s.setSoTimeout(2000);
            s.getOutputStream().write("hi\n".getBytes(StandardCharsets.UTF_8));
            String line = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
            if (line == null) {
                throw new IOException("closed without an answer");
            }
            return line;
        }
    }

    /** A connection kept open, asked a line now and then. */
    private record LongLived(Socket socket, BufferedReader in, OutputStream out) implements Closeable {
        static LongLived open(NetworkNamespace ns, String address, int port) {
            return ns.call(() -> {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(address, port), 2000);
                s.setSoTimeout(2000);
                return new LongLived(s, new BufferedReader(new InputStreamReader(s.getInputStream(),
                        StandardCharsets.UTF_8)), s.getOutputStream());
            });
        }

        String ask() throws IOException {
            out.write("hi\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            return in.readLine();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** TCP servers in containers answering each line of each connection with the container's name. */
    private static final class LineServers implements Closeable {
        private final List<ServerSocket> sockets = new ArrayList<>();

        void start(NetworkNamespace ns, InetAddress address, String name) {
            ServerSocket server = ns.call(() -> {
                ServerSocket s = new ServerSocket();
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(address, 80), 512);
                return s;
            });
            sockets.add(server);
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket c = server.accept();
                        Thread.ofVirtual().start(() -> answer(c, name));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        private static void answer(Socket c, String name) {
            try (c; BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
                OutputStream out = c.getOutputStream();
                while (in.readLine() != null) {
                    out.write((name + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        @Override
        public void close() {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    private static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
