package dev.gatun.cli.netavark;

import dev.gatun.cli.testing.Podman5Lab;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.testing.DebianBed;
import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.testing.NftMonitor;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.rtnl.Sysctls;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.CraftedFrames;
import dev.gatun.testing.CraftedFrames.Wire;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.SteadyUdpClient;
import dev.gatun.testing.UdpInbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Real Podman 5.4 with netavark 1.14 (the test bed's) handing networks of driver gatun to
 * gatun's netavark plugin, driven as a user drives Podman: {@code podman network create -d
 * gatun}, {@code podman run -p}, {@code podman port}, {@code podman rm -f}, {@code podman network
 * rm}. Traffic from an outside namespace (a veth into the host namespace, 192.0.2.1), from the
 * host's 127.0.0.1 and hairpin from a sibling. Without a serve here: each plugin call is a JVM;
 * {@link PodmanNetavarkServedIT} runs the same through a serve.
 */
@ExtendWith(FreshNamespaces.class)
class PodmanNetavarkIT {

    static final String HOST_IP = PodmanCniIT.HOST_IP;
    static final String WEB = PodmanCniIT.WEB;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final InetAddress OUTSIDE = InetAddress.ofLiteral("192.0.2.2");
    private static final InetAddress LOCALHOST = InetAddress.ofLiteral("127.0.0.1");
    /** How long a refused frame is given to arrive after its control has. */
    private static final Duration GRACE = Duration.ofMillis(500);
    private static final Duration ARRIVES = Duration.ofSeconds(3);
    private static final Duration EVERY = Duration.ofMillis(100);

    boolean served() {
        return false;
    }

    /** Called after each test's Podman work, with the lab still open: a served run checks its serve ran the calls. */
    void checkServed(Podman5Lab lab, String verb, int calls) throws InterruptedException {
    }

    @Test
    void publishedPortsAnswerAndRemovalLeavesNothing(NetworkNamespace host, NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        String linksBefore = links(host);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "web");
            JsonNode net = JSON.readTree(lab.podmanOk("network", "inspect", "web").out()).get(0);
            assertThat(net.path("driver").asText()).isEqualTo("gatun");
            assertThat(net.path("network_interface").asText()).isEqualTo("gatun-web");
            String subnet = net.path("subnets").get(0).path("subnet").asText();
            String gateway = net.path("subnets").get(0).path("gateway").asText();
            assertThat(subnet).isEqualTo("10.90.0.0/24");
            assertThat(gateway).isEqualTo("10.90.0.1");

            lab.podmanOk("run", "-d", "--name", "web", "--network", "web", "-p", "8080:80", "-p", "5353:53/udp",
                    "-p", "80", Podman5Lab.IMAGE, "sh", "-c", WEB);
            assertThat(PodmanCniIT.http(out, HOST_IP, 8080)).startsWith("hello-from-");
            assertThat(PodmanCniIT.udp(out, HOST_IP, 5353)).startsWith("udp-from-");
            assertThat(PodmanCniIT.http(host, "127.0.0.1", 8080)).startsWith("hello-from-");
            String ports = lab.podmanOk("port", "web").out();
            assertThat(ports).contains("80/tcp -> 0.0.0.0:8080").contains("53/udp -> 0.0.0.0:5353");
            Matcher random = Pattern.compile("80/tcp -> 0\\.0\\.0\\.0:(?!8080\\b)(\\d+)").matcher(ports);
            assertThat(random.find()).as("podman port lists the random host port of -p 80: " + ports).isTrue();
            assertThat(PodmanCniIT.http(out, HOST_IP, Integer.parseInt(random.group(1)))).startsWith("hello-from-");

            JsonNode inspect = JSON.readTree(lab.podmanOk("inspect", "web").out()).get(0);
            JsonNode onWeb = inspect.path("NetworkSettings").path("Networks").path("web");
            String ip = onWeb.path("IPAddress").asText();
            assertThat(ip).startsWith("10.90.0.");
            assertThat(onWeb.path("Gateway").asText()).isEqualTo(gateway);
            assertThat(Oracle.in(host, "ip", "-o", "link", "show", "gatun-web")).contains("gatun-web");
            assertThat(PodmanCniIT.elements(host)).contains("tcp . 8080").contains("udp . 5353").contains(ip);

            // Hairpin: a container of the same bridge, through the host's published port.
            lab.podmanOk("run", "-d", "--name", "sibling", "--network", "web", Podman5Lab.IMAGE, "sleep", "600");
            DebianBed.Result hairpin = null;
            for (int i = 0; i < 30; i++) {
                hairpin = lab.podman("exec", "sibling", "sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 "
                        + HOST_IP + " 8080");
                if (hairpin.code() == 0 && hairpin.out().contains("hello-from-")) {
                    break;
                }
                Thread.sleep(100);
            }
            assertThat(hairpin.out()).as(hairpin.err()).startsWith("HTTP/1.1 200").contains("hello-from-");
            checkServed(lab, "setup", 2);

            lab.podmanOk("rm", "-f", "-t", "0", "web", "sibling");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("8080").doesNotContain("5353").doesNotContain(ip);
            assertThat(links(host)).as("the bridge and every veth go with the last container").isEqualTo(linksBefore);
            checkServed(lab, "teardown", 2);
            lab.podmanOk("network", "rm", "web");
            assertThat(lab.podmanOk("network", "ls", "--format", "{{.Name}}").out()).doesNotContain("web");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).doesNotContain("10.90.0.");
        }
    }

    /**
     * netavark's port_mappings past the plain ones: a range onto a range (one entry with its
     * {@code range}), a host address of the loopback and one of the host's own; each host port to
     * its own container port, each only on its address; {@code podman port} lists them.
     */
    @Test
    void rangesAndHostAddressesAnswerWhereTheyAreBound(NetworkNamespace host, NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.92.0.0/24", "ranged");
            lab.podmanOk("run", "-d", "--name", "ranged", "--network", "ranged", "-p", "9000-9002:80-82",
                    "-p", "127.0.0.1:9010:80", "-p", HOST_IP + ":9011:81", Podman5Lab.IMAGE, "sh", "-c",
                    "for p in 80 81 82; do mkdir -p /www$p && echo port-$p > /www$p/index.html; done;"
                            + " httpd -p 81 -h /www81; httpd -p 82 -h /www82; exec httpd -f -p 80 -h /www80");
            for (int k = 0; k < 3; k++) {
                assertThat(PodmanCniIT.http(out, HOST_IP, 9000 + k)).as("host port %d", 9000 + k).isEqualTo("port-" + (80 + k));
            }
            assertThat(PodmanCniIT.http(host, "127.0.0.1", 9010)).isEqualTo("port-80");
            assertThat(PodmanCniIT.http(out, HOST_IP, 9011)).isEqualTo("port-81");
            assertThat(Oracle.tryIn(out, "curl", "-s", "-m", "2", "http://" + HOST_IP + ":9010/").exitCode())
                    .as("bound to 127.0.0.1: not from outside").isNotZero();
            assertThat(Oracle.tryIn(host, "curl", "-s", "-m", "2", "http://127.0.0.1:9011/").exitCode())
                    .as("bound to " + HOST_IP + ": not on 127.0.0.1").isNotZero();
            String ports = lab.podmanOk("port", "ranged").out();
            assertThat(ports).contains("80/tcp -> 0.0.0.0:9000", "81/tcp -> 0.0.0.0:9001", "82/tcp -> 0.0.0.0:9002",
                    "80/tcp -> 127.0.0.1:9010", "81/tcp -> " + HOST_IP + ":9011");
            checkServed(lab, "setup", 1);
            lab.podmanOk("rm", "-f", "-t", "0", "ranged");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("comment");
        }
    }

    /**
     * A dual-stack network with counters: a container's setup is one nftables transaction, as nft
     * monitor sees it: the first container's (on a host where gatun has no network yet: gatun's
     * table, the network's entries and its ports) and the second's (its ports on both of its
     * addresses). The network counts its mappings' traffic.
     */
    @Test
    void aDualStackContainersSetupIsOneTransaction(NetworkNamespace host, NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            assertThat(Oracle.in(host, "nft", "list", "tables")).doesNotContain("gatun");
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--ipv6", "--subnet", "10.95.0.0/24",
                    "--subnet", "fd00:95::/64", "-o", "gatun.counters=true", "dual");
            try (NftMonitor monitor = NftMonitor.start(host)) {
                DebianBed.Result first = lab.runDetached("first", "dual", List.of("9040:80"), "sh", "-c", WEB);
                assertThat(first.code()).as(first.err()).isZero();
                monitor.stop();
                assertThat(monitor.generations()).as("commits while the network's first container started").hasSize(1);
            }
            assertThat(PodmanCniIT.http(out, HOST_IP, 9040)).as("the first container's port, its network masqueraded")
                    .startsWith("hello-from-");
            try (NftMonitor monitor = NftMonitor.start(host)) {
                DebianBed.Result second = lab.runDetached("second", "dual", List.of("9041:80", "5355:53/udp"), "sh", "-c", WEB);
                assertThat(second.code()).as(second.err()).isZero();
                monitor.stop();
                assertThat(monitor.generations()).as("commits while the second container started").hasSize(1);
            }
            assertThat(PodmanCniIT.http(out, HOST_IP, 9041)).startsWith("hello-from-");
            String six = Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports6");
            assertThat(six).contains("tcp . 9041", "udp . 5355", "fd00:95::");
            assertThat(Oracle.in(host, "nft", "list", "set", "inet", "gatun", "counted")).as("-o gatun.counters=true")
                    .contains("\"gatun-dual\"");
            lab.podmanOk("rm", "-f", "-t", "0", "first", "second");
            assertThat(PodmanCniIT.elements(host) + Oracle.tryIn(host, "nft", "list", "map", "inet", "gatun", "ports6").stdout())
                    .doesNotContain("comment");
        }
    }

    /**
     * The network options through Podman: {@code -o gatun.icc=false} keeps a network's containers
     * apart while its ports answer and it reaches out (masqueraded behind the host's address);
     * {@code --internal} lets its containers reach each other and nothing else, a port published
     * there included. Every refusal has its positive control.
     */
    @Test
    void iccOffAndInternalNetworksShapeTheTrafficAsAsked(NetworkNamespace host, NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        try (Podman5Lab lab = Podman5Lab.start(host, served()); ReplyServers outside = new ReplyServers()) {
            outside.tcpWhoAmI(out, "192.0.2.2", 9099);
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.93.0.0/24", "-o",
                    "gatun.icc=false", "apart");
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.94.0.0/24", "--internal",
                    "closed");
            for (String[] c : List.of(new String[] {"a1", "apart", ""}, new String[] {"a2", "apart", "9030:80"},
                    new String[] {"c1", "closed", "9031:80"}, new String[] {"c2", "closed", ""})) {
                DebianBed.Result run = lab.runDetached(c[0], c[1], c[2].isEmpty() ? List.of() : List.of(c[2]), "sh", "-c", WEB);
                assertThat(run.code()).as("podman run %s on %s: %s", c[0], c[1], run.err()).isZero();
            }

            assertThat(PodmanCniIT.http(out, HOST_IP, 9030)).as("a2's port").startsWith("hello-from-");
            assertThat(fetch(lab, "a1", "192.0.2.2", 9099)).as("out of apart, masqueraded").contains(HOST_IP);
            assertThat(fetch(lab, "a1", "127.0.0.1", 80)).as("a1 serves").contains("hello-from-");
            assertThat(fetch(lab, "a1", ip(lab, "a2", "apart"), 80)).as("icc off: a1 to a2").doesNotContain("hello-from-");

            assertThat(fetch(lab, "c2", ip(lab, "c1", "closed"), 80)).as("within an internal network").contains("hello-from-");
            assertThat(fetch(lab, "c1", "192.0.2.2", 9099)).as("out of an internal network").doesNotContain(HOST_IP);
            assertThat(Oracle.tryIn(out, "curl", "-s", "-m", "2", "http://" + HOST_IP + ":9031/").stdout())
                    .as("into an internal network by its published port").doesNotContain("hello-from-");
            lab.podmanOk("rm", "-f", "-t", "0", "a1", "a2", "c1", "c2");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("comment");
        }
    }

    /**
     * Published ports let no one in where they do not belong, tried as an attacker tries it: UDP in
     * Ethernet frames written byte by byte and sent with an AF_PACKET socket (nothing on the
     * sending side routes or checks them), each refusal with a control made the same way. A
     * container sends to 127.0.0.1 through its gateway: gatun's bridge routes 127.0.0.0/8
     * (route_localnet), and the host's loopback-only services stay out of reach. The outside sends
     * to the host's MAC with destination 127.0.0.1: a port published on 127.0.0.1 only does not
     * answer it. Then UDP: a client that kept sending from one source port since before {@code
     * podman run -p} reaches the container within a second of the mapping's commit, and conntrack
     * lists its entry untranslated before and translated after. Arrival is seen by inboxes the test
     * binds in the containers' namespaces (the containers only sleep): an answer would be no sound
     * sign, as one to a frame for 127.0.0.1 would come back from 127.0.0.1, a martian source the
     * outside drops, and the steady client reads none.
     */
    @Test
    void loopbackIsNoDoorAndAUdpClientThatBeganBeforeThePublishArrives(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        PodmanCniIT.outside(host, out);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.96.0.0/24", "guarded");
            DebianBed.Result guarded = lab.runDetached("guarded", "guarded", List.of("127.0.0.1:5353:53/udp",
                    "5354:53/udp"), "sleep", "600");
            assertThat(guarded.code()).as(guarded.err()).isZero();
            NetworkNamespace container = namespaceOf(lab, "guarded");
            InetAddress ip = InetAddress.ofLiteral(ip(lab, "guarded", "guarded"));
            InetAddress gateway = InetAddress.ofLiteral("10.96.0.1");
            assertThat(new Sysctls(host).read("ipv4/conf/gatun-guarded/route_localnet"))
                    .as("the door this guards: the network's bridge routes 127.0.0.0/8").isEqualTo("1");

            try (UdpInbox loopbackOnly = UdpInbox.bind(host, "127.0.0.1", 9999);
                 UdpInbox onTheGateway = UdpInbox.bind(host, gateway.getHostAddress(), 9998)) {
                Wire toGateway = Wire.to(container, "eth0", host, "gatun-guarded");
                // The refused frame first: had it passed, it would have arrived before its control.
                CraftedFrames.udp(toGateway, ip, 40001, LOCALHOST, 9999, "to the host's 127.0.0.1");
                CraftedFrames.udp(toGateway, ip, 40002, gateway, 9998, "control");

                assertThat(onTheGateway.got("control", ARRIVES)).as("control: the same frame to the gateway's address")
                        .isTrue();
                assertThat(loopbackOnly.got("to the host's 127.0.0.1", GRACE)).as("a host service bound to 127.0.0.1")
                        .isFalse();
            }
            try (UdpInbox inbox = UdpInbox.bind(container, ip.getHostAddress(), 53)) {
                Wire lan = Wire.to(out, "out1", host, "out0");
                CraftedFrames.udp(lan, OUTSIDE, 40003, LOCALHOST, 5353, "to 127.0.0.1 from outside");
                CraftedFrames.udp(lan, OUTSIDE, 40004, InetAddress.ofLiteral(HOST_IP), 5354, "control");

                assertThat(inbox.got("control", ARRIVES)).as("control: the same frame to a port on every address")
                        .isTrue();
                assertThat(inbox.got("to 127.0.0.1 from outside", GRACE)).as("a port published on 127.0.0.1 only")
                        .isFalse();
            }
            checkServed(lab, "setup", 1);

            try (SteadyUdpClient early = SteadyUdpClient.start(out, HOST_IP, 5355, "early", EVERY)) {
                early.awaitSent(5);
                // conntrack's own listing: the client's entry, made while nothing was published, goes to the host itself.
                String before = Oracle.in(host, "conntrack", "-L", "-p", "udp");
                Matcher entry = Pattern.compile("src=192\\.0\\.2\\.2 dst=" + Pattern.quote(HOST_IP)
                        + " sport=(\\d+) dport=5355 \\[UNREPLIED\\] src=" + Pattern.quote(HOST_IP) + " ").matcher(before);
                assertThat(entry.find()).as("the early client's untranslated entry before the publish:\n" + before).isTrue();
                String flow = "sport=" + entry.group(1) + " dport=5355 [UNREPLIED] src=";

                try (InboxInTheNextNamespace late = new InboxInTheNextNamespace(lab, 53, "early-")) {
                    long mapped;
                    try (NftMonitor monitor = NftMonitor.start(host)) {
                        DebianBed.Result run = lab.runDetached("late", "guarded", List.of("5355:53/udp"), "sleep", "600");
                        assertThat(run.code()).as(run.err()).isZero();
                        mapped = monitor.stop().stream().filter(e -> e.text().contains("udp . 5355 ")).findFirst()
                                .orElseThrow(() -> new AssertionError("nft monitor saw no mapping of udp 5355")).nanos();
                    }
                    assertThat(Duration.ofNanos(late.arrived() - mapped))
                            .as("from the mapping's commit (as nft monitor reported it) to the early client's first "
                                    + "datagram in the container").isLessThanOrEqualTo(Duration.ofSeconds(1));
                    assertThat(Oracle.in(host, "conntrack", "-L", "-p", "udp")).as("its entry now, in conntrack's listing")
                            .doesNotContain(flow + HOST_IP + " ").contains(flow + ip(lab, "late", "guarded") + " ");
                    try (SteadyUdpClient fresh = SteadyUdpClient.start(out, HOST_IP, 5355, "fresh", EVERY)) {
                        assertThat(late.inbox().gotAnyStartingWith("fresh-", Duration.ofSeconds(1)))
                                .as("control: a client from a fresh source port").isTrue();
                    }
                }
            }
            checkServed(lab, "setup", 2);
            lab.podmanOk("rm", "-f", "-t", "0", "guarded", "late");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("comment");
        }
    }

    /** A running container's network namespace, entered by its PID as any root process can. */
    private static NetworkNamespace namespaceOf(Podman5Lab lab, String container) {
        String pid = lab.podmanOk("inspect", "-f", "{{.State.Pid}}", container).out().strip();
        return NetworkNamespace.at(Path.of("/proc", pid, "ns", "net"));
    }

    /**
     * An inbox on 0.0.0.0:PORT in the next network namespace Podman makes, bound by a thread of its
     * own as soon as the namespace's file under the bed's /run/netns refers to one: before netavark's
     * setup runs in it, so that no datagram a new mapping lets through is missed. Notes when the
     * first payload starting with its prefix arrived.
     */
    private static final class InboxInTheNextNamespace implements AutoCloseable {

        private final CompletableFuture<UdpInbox> inbox = new CompletableFuture<>();
        private final CompletableFuture<Long> arrived = new CompletableFuture<>();
        private final Thread watcher;

        InboxInTheNextNamespace(Podman5Lab lab, int port, String prefix) {
            Path dir = lab.bed.root().resolve("run/netns");
            List<Path> before = namespaceFiles(dir);
            watcher = Thread.ofPlatform().daemon().name("next-namespace-inbox").start(() -> {
                try {
                    UdpInbox in = bindInNext(dir, before, port);
                    inbox.complete(in);
                    arrived.complete(in.gotAnyStartingWith(prefix, Duration.ofSeconds(30)) ? System.nanoTime() : null);
                } catch (Throwable e) {
                    inbox.completeExceptionally(e);
                    arrived.completeExceptionally(e);
                }
            });
        }

        private static UdpInbox bindInNext(Path dir, List<Path> before, int port) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (System.nanoTime() < deadline) {
                for (Path p : namespaceFiles(dir)) {
                    if (!before.contains(p)) {
                        try {
                            return UdpInbox.bind(NetworkNamespace.at(p), "0.0.0.0", port);
                        } catch (InvalidInputException notYet) {
                            // the file is made before the namespace is mounted on it
                        }
                    }
                }
                Thread.sleep(5);
            }
            throw new AssertionError("no new network namespace under " + dir + " within 2 minutes");
        }

        private static List<Path> namespaceFiles(Path dir) {
            try (Stream<Path> files = Files.list(dir)) {
                return files.toList();
            } catch (NoSuchFileException none) {
                return List.of();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        UdpInbox inbox() {
            return Bounded.get(inbox, "the inbox in the new namespace");
        }

        /** When the first payload with the prefix arrived ({@link System#nanoTime()}); fails when none did in 30 s. */
        long arrived() {
            Long at = Bounded.get(arrived, "the first payload in the new namespace");
            if (at == null) {
                throw new AssertionError("nothing arrived in the new namespace within 30 s of its inbox's bind");
            }
            return at;
        }

        @Override
        public void close() throws IOException {
            watcher.interrupt();
            Bounded.join(watcher, "the thread of the inbox in the new namespace");
            if (inbox.isDone() && !inbox.isCompletedExceptionally()) {
                inbox.join().close();
            }
        }
    }

    /**
     * A container whose network namespace goes before Podman tears it down (its conmon and
     * process killed behind Podman's back, the namespace's mount removed, as after a crash):
     * netavark cannot open the namespace and never calls the plugin, so its mappings stay; the
     * next setup on the network takes them away, and a container publishing the same host port
     * gets it. Then its removal leaves nothing: no element, link or network.
     */
    @Test
    void thePortsOfAContainerWhoseNamespaceWentWithoutATeardownAreFreedByTheNextSetup(NetworkNamespace host,
                                                                                        NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        String linksBefore = links(host);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.95.0.0/24", "crashy");
            lab.runDetached("gone", "crashy", List.of("9040:80", "9041:53/udp"), "sh", "-c", WEB);
            assertThat(PodmanCniIT.http(out, HOST_IP, 9040)).startsWith("hello-from-");
            String goneId = lab.podmanOk("inspect", "-f", "{{.Id}}", "gone").out().strip();
            String[] state = lab.podmanOk("inspect", "-f", "{{.State.ConmonPid}} {{.State.Pid}} {{.NetworkSettings.SandboxKey}}",
                    "gone").out().strip().split(" ");
            for (int i = 0; i < 2; i++) {
                ProcessHandle p = ProcessHandle.of(Long.parseLong(state[i])).orElseThrow();
                p.destroyForcibly();
                p.onExit().get(10, TimeUnit.SECONDS);
            }
            DebianBed.Result unmount = lab.inBed("/bin/sh", "-c", "umount " + state[2] + " && rm " + state[2]);
            assertThat(unmount.code()).as("the namespace's mount removed: %s", unmount.err()).isZero();
            // Podman's first rm fails on netavark's "open container netns", the second removes the container.
            for (int i = 0; i < 3 && lab.podman("container", "exists", "gone").code() == 0; i++) {
                lab.podman("rm", "-f", "-t", "0", "gone");
            }
            assertThat(lab.podman("container", "exists", "gone").code()).as("the container removed").isNotZero();
            assertThat(PodmanCniIT.elements(host)).as("no teardown reached gatun").contains(goneId);

            DebianBed.Result next = lab.runDetached("next", "crashy", List.of("9040:80"), "sh", "-c", WEB);
            assertThat(next.code()).as("podman run of a container on the same host port: %s", next.err()).isZero();
            assertThat(PodmanCniIT.http(out, HOST_IP, 9040)).startsWith("hello-from-");
            assertThat(PodmanCniIT.elements(host)).as("the gone container's mappings").doesNotContain(goneId)
                    .doesNotContain("9041");
            checkServed(lab, "setup", 2);
            lab.podmanOk("rm", "-f", "-t", "0", "next");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("9040");
            assertThat(links(host)).as("the bridge and the veths gone with the last container").isEqualTo(linksBefore);
            lab.podmanOk("network", "rm", "crashy");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).doesNotContain("10.95.0.");
        }
    }

    /** What {@code container} gets from {@code address:port} within 3 s (nothing when refused or dropped). */
    private static String fetch(Podman5Lab lab, String container, String address, int port) {
        return lab.podman("exec", container, "sh", "-c", "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 " + address + " "
                + port).out();
    }

    private static String ip(Podman5Lab lab, String container, String network) throws Exception {
        return JSON.readTree(lab.podmanOk("inspect", container).out()).get(0).path("NetworkSettings").path("Networks")
                .path(network).path("IPAddress").asText();
    }

    @Test
    void twentyContainersStartedAtOnceWithFourPortsEachAllAnswer(NetworkNamespace host, NetworkNamespace out)
            throws Exception {
        PodmanCniIT.outside(host, out);
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "--subnet", "10.91.0.0/24", "many");
            String serve = "echo hello-from-$HOSTNAME > /tmp/index.html; for p in 80 81 82; do httpd -p $p -h /tmp; done; "
                    + "exec httpd -f -p 83 -h /tmp";
            List<CompletableFuture<DebianBed.Result>> runs = new ArrayList<>();
            try (ExecutorService pool = Executors.newFixedThreadPool(20)) {
                for (int c = 0; c < 20; c++) {
                    List<String> ports = new ArrayList<>();
                    for (int k = 0; k < 4; k++) {
                        ports.add((20000 + c * 4 + k) + ":" + (80 + k));
                    }
                    String name = "m" + c;
                    runs.add(CompletableFuture.supplyAsync(() -> lab.runDetached(name, "many", ports, "sh", "-c", serve),
                            pool));
                }
            }
            for (CompletableFuture<DebianBed.Result> r : runs) {
                DebianBed.Result done = Bounded.get(r, "podman run of a container with four ports");
                assertThat(done.code()).as(done.err()).isZero();
            }
            for (int c = 0; c < 20; c++) {
                for (int k = 0; k < 4; k++) {
                    assertThat(PodmanCniIT.http(out, HOST_IP, 20000 + c * 4 + k)).as("container m" + c + " port " + (80 + k))
                            .startsWith("hello-from-");
                }
            }
            checkServed(lab, "setup", 20);
            lab.podmanOk("rm", "-a", "-f", "-t", "0");
            assertThat(PodmanCniIT.elements(host)).doesNotContain("comment");
        }
    }

    @Test
    void aHostPortHeldByAnotherProcessIsRefusedWithASentencePodmanPrints(NetworkNamespace host) throws Exception {
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            lab.podmanOk("network", "create", "-d", "gatun", "--disable-dns", "held");
            Oracle.in(host, "ip", "link", "set", "lo", "up");
            String rulesBefore = Oracle.in(host, "nft", "list", "ruleset");
            DebianBed.Result refused = host.call(() -> {
                try (ServerSocket squatter = new ServerSocket()) {
                    squatter.bind(new InetSocketAddress("0.0.0.0", 9090));
                    return lab.runDetached("late", "held", List.of("9090:80"), "sleep", "600");
                }
            });
            assertThat(refused.code()).isNotZero();
            assertThat(refused.err()).contains("9090");
            // The port held by a running container of this network: refused too, and the holder keeps it.
            lab.podmanOk("run", "-d", "--name", "first", "--network", "held", "-p", "9191:80", Podman5Lab.IMAGE, "sh",
                    "-c", WEB);
            DebianBed.Result second = lab.runDetached("second", "held", List.of("9191:80"), "sleep", "600");
            assertThat(second.code()).isNotZero();
            assertThat(second.err()).contains("9191");
            assertThat(PodmanCniIT.http(host, "127.0.0.1", 9191)).startsWith("hello-from-");
            // A port no socket holds but gatun maps for another owner: gatun's plugin refuses, and Podman says why.
            GatunCli.ok("--netns", host.name(), "publish", "held", "10.90.0.250", "-p", "9292:80", "--owner", "deploy-7");
            DebianBed.Result mapped = lab.runDetached("third", "held", List.of("9292:80"), "sleep", "600");
            assertThat(mapped.code()).isNotZero();
            assertThat(mapped.err()).contains("gatun setup").contains("9292").contains("deploy-7");
            GatunCli.ok("--netns", host.name(), "unpublish", "held", "10.90.0.250", "--owner", "deploy-7");
            lab.podman("rm", "-f", "-t", "0", "late", "second", "third");
            lab.podmanOk("rm", "-f", "-t", "0", "first");
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).as("nothing of the refused runs stayed")
                    .isEqualTo(rulesBefore);
        }
    }

    @Test
    void badInputIsNetavarksErrorDocumentAndChangesNothing(NetworkNamespace host) throws Exception {
        try (Podman5Lab lab = Podman5Lab.start(host, served())) {
            String rulesBefore = Oracle.in(host, "nft", "list", "ruleset");
            DebianBed.Result dns = lab.podman("network", "create", "-d", "gatun", "named");
            assertThat(dns.code()).isNotZero();
            assertThat(dns.err()).contains("cannot resolve container names").contains("--disable-dns");
            DebianBed.Result subnet = lab.podman("network", "create", "-d", "gatun", "--disable-dns", "--subnet",
                    "10.92.0.1/24", "bad");
            assertThat(subnet.code()).isNotZero();
            assertThat(subnet.err()).contains("10.92.0.1/24").contains("host bits");
            DebianBed.Result option = lab.podman("network", "create", "-d", "gatun", "--disable-dns", "-o", "colour=blue",
                    "bad");
            assertThat(option.code()).isNotZero();
            assertThat(option.err()).contains("unknown option colour").contains("gatun.icc");
            assertThat(lab.podmanOk("network", "ls", "--format", "{{.Name}}").out()).doesNotContain("named")
                    .doesNotContain("bad");

            // netavark's own calls, with what Podman would never send.
            String network = """
                    {"name": "direct", "id": "1", "driver": "gatun", "network_interface": "gatun-direct",
                     "subnets": [{"subnet": "10.93.0.0/24", "gateway": "10.93.0.1"}], "ipv6_enabled": false,
                     "internal": false, "dns_enabled": false, "ipam_options": {"driver": "host-local"}}""";
            String setup = """
                    {"container_id": "c0ffee", "container_name": "direct", "network": %s,
                     "network_options": {"interface_name": "eth0", "static_ips": ["10.93.0.5"]},
                     "port_mappings": [{"container_port": 80, "host_ip": "", "host_port": 70000, "protocol": "tcp",
                                        "range": 1}]}""".formatted(network);
            Oracle.in(host, "ip", "netns", "add", "gp5-direct");
            try {
                assertError(lab.plugin(setup, "setup", "/run/netns/gp5-direct"), "70000");
                assertError(lab.plugin("{\"name\": ", "setup", "/run/netns/gp5-direct"), "not JSON");
                assertError(lab.plugin(setup, "frobnicate"), "unknown subcommand 'frobnicate'");
                assertError(lab.plugin(setup.replace("10.93.0.5", "10.99.0.5").replace("70000", "8080"), "setup",
                        "/run/netns/gp5-direct"), "10.99.0.5");
                assertThat(Oracle.in(host, "nft", "list", "ruleset")).as("nothing changed").isEqualTo(rulesBefore);
                assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gatun-direct");
                // teardown of what is not there, and with the namespace gone: nothing to do, no error, twice.
                String good = setup.replace("70000", "8080");
                for (int i = 0; i < 2; i++) {
                    DebianBed.Result t = lab.plugin(good, "teardown", "/run/netns/no-such-namespace");
                    assertThat(t.code()).as(t.out() + t.err()).isZero();
                    assertThat(t.out()).isEmpty();
                }
            } finally {
                Oracle.in(host, "ip", "netns", "del", "gp5-direct");
            }
        }
    }

    private static void assertError(DebianBed.Result r, String says) throws Exception {
        assertThat(r.code()).as(r.out() + r.err()).isEqualTo(1);
        JsonNode doc = JSON.readTree(r.out());
        assertThat(doc.path("error").asText()).contains(says);
        assertThat(doc.size()).as("netavark's error document has one field: " + r.out()).isEqualTo(1);
    }

    static String links(NetworkNamespace host) {
        return String.join("\n", Oracle.in(host, "ip", "-o", "link", "show").lines()
                .map(l -> l.replaceAll("^\\d+: ", "").replaceAll("\\\\.*", "")).sorted().toList());
    }
}
