package dev.gatun.cli.docker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.facade.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Host ports the Docker plugin chooses itself ({@code -p 80}: HostPort 0), and a given one a
 * socket of the host holds, through the plugin's
 * own request handling in this process (no dockerd: Docker's calls are what it would send), on a
 * driver of a fresh namespace whose ip_local_port_range, ip_local_reserved_ports and sockets the
 * test sets.
 */
@ExtendWith(FreshNamespaces.class)
class ChosenPortsIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NET = "c0ffee".repeat(10) + "abcd";
    private static final int ENDPOINTS = 200;

    @Test
    void concurrentChoicesAreDistinctAndSkipReservedAndHeldPortsUntilTheRangeRunsOut(NetworkNamespace host)
            throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.setUp("lo", true);
        }
        Oracle.in(host, "sh", "-c", "echo '42000 42299' > /proc/sys/net/ipv4/ip_local_port_range; "
                + "echo '42000-42009,42100' > /proc/sys/net/ipv4/ip_local_reserved_ports");
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        try (GatunDriver driver = Gatun.open(host, "nftables");
             ServerSocketChannel listener = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                     .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 42010)));
             DatagramChannel udpOnly = host.call(() -> DatagramChannel.open(StandardProtocolFamily.INET)
                     .bind(new InetSocketAddress(InetAddress.ofLiteral("0.0.0.0"), 42011)));
             ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            assertThat(listener.isOpen() && udpOnly.isOpen()).isTrue();
            DockerPlugin plugin = new DockerPlugin(driver, log::add);
            ok(plugin, "NetworkDriver.CreateNetwork", """
                    {"NetworkID": "%s", "Options": {}, "IPv4Data": [{"Pool": "10.89.0.0/16", "Gateway": "10.89.0.1/16"}]}
                    """.formatted(NET));
            for (int i = 0; i < ENDPOINTS + 5; i++) {
                ok(plugin, "NetworkDriver.CreateEndpoint", """
                        {"NetworkID": "%s", "EndpointID": "%s", "Interface": {"Address": "10.89.%d.%d/16", "AddressIPv6": "", "MacAddress": ""}, "Options": {}}
                        """.formatted(NET, endpoint(i), 1 + i / 200, 2 + i % 200));
            }

            // 200 containers, each with -p 80, all at once.
            List<Future<DockerPlugin.Reply>> replies = new ArrayList<>();
            for (int i = 0; i < ENDPOINTS; i++) {
                String id = endpoint(i);
                replies.add(pool.submit(() -> plugin.handle("NetworkDriver.ProgramExternalConnectivity", chosenPort(id))));
            }
            for (Future<DockerPlugin.Reply> r : replies) {
                DockerPlugin.Reply reply = Bounded.get(r, "a ProgramExternalConnectivity call");
                assertThat(reply.status()).as("reply %s", reply.json()).isEqualTo(200);
            }
            List<Integer> ports = driver.published(null).stream().map(PortMapping::hostPort).toList();
            assertThat(ports).hasSize(ENDPOINTS).doesNotHaveDuplicates().allMatch(p -> p >= 42000 && p <= 42299)
                    .doesNotContain(42100, 42010)
                    .noneMatch(p -> p <= 42009);
            // The UDP socket holds 42011 for UDP only: a TCP port may be 42011.
            assertThat(ports).contains(42011);
            // The lowest free ones: 42011-42099 and 42101-42211.
            assertThat(ports).containsExactlyInAnyOrderElementsOf(IntStream.rangeClosed(42011, 42211)
                    .filter(p -> p != 42100).boxed().toList());

            // A given host port that a socket holds: Docker's error names the port and the process.
            DockerPlugin.Reply given = plugin.handle("NetworkDriver.ProgramExternalConnectivity",
                    chosenPort(endpoint(ENDPOINTS)).replace("\"HostPort\":0,\"HostPortEnd\":0",
                            "\"HostPort\":42010,\"HostPortEnd\":42010"));
            assertThat(given.status()).isEqualTo(409);
            assertThat(JSON.readTree(given.json()).get("Err").asText()).contains("*:42010/tcp")
                    .contains("java (pid " + ProcessHandle.current().pid() + ") listens on [::]:42010/tcp");
            assertThat(driver.published(null)).hasSize(ENDPOINTS);

            // A range narrowed to five ports, one of them held by a listener: four fit, the fifth is a clear error.
            Oracle.in(host, "sh", "-c", "echo '42300 42304' > /proc/sys/net/ipv4/ip_local_port_range");
            try (ServerSocketChannel another = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET)
                    .bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 42302)))) {
                assertThat(another.isOpen()).isTrue();
                for (int i = ENDPOINTS; i < ENDPOINTS + 4; i++) {
                    ok(plugin, "NetworkDriver.ProgramExternalConnectivity", chosenPort(endpoint(i)));
                }
                DockerPlugin.Reply out = plugin.handle("NetworkDriver.ProgramExternalConnectivity",
                        chosenPort(endpoint(ENDPOINTS + 4)));
                assertThat(out.status()).isEqualTo(409);
                assertThat(JSON.readTree(out.json()).get("Err").asText()).isEqualTo("no free tcp host port left in "
                        + "42300-42304 (net.ipv4.ip_local_port_range): 4 published or chosen, 1 held by sockets of the "
                        + "host, 0 reserved (net.ipv4.ip_local_reserved_ports)");
            }
            assertThat(driver.published(null)).hasSize(ENDPOINTS + 4).extracting(PortMapping::hostPort)
                    .contains(42300, 42301, 42303, 42304).doesNotContain(42302);
        }
    }

    /** A port a CNI chain published outside gatun's networks is taken: the plugin chooses the next one. */
    @Test
    void aPortPublishedOutsideTheNetworksIsNotChosen(NetworkNamespace host) {
        Oracle.in(host, "sh", "-c", "echo '42400 42401' > /proc/sys/net/ipv4/ip_local_port_range; "
                + "echo '' > /proc/sys/net/ipv4/ip_local_reserved_ports");
        try (GatunDriver driver = Gatun.open(host, "nftables")) {
            FreePorts free = new FreePorts(driver, () -> host);
            assertThat(free.lowest(Protocol.TCP, null, 0, 0, Map.of())).as("before the chain's mapping").isEqualTo(42400);
            driver.publishOutside(new PortRequest("chain", InetAddress.ofLiteral("10.96.0.2"), List.of(PortSpec.parse("42400:80")),
                    "ch1/eth0@chain"), HostPortCheck.SKIP);
            assertThat(free.lowest(Protocol.TCP, null, 0, 0, Map.of())).isEqualTo(42401);
            assertThat(free.lowest(Protocol.UDP, null, 0, 0, Map.of())).as("another protocol").isEqualTo(42400);
        }
    }

    private static String endpoint(int i) {
        return "%064x".formatted(i + 1);
    }

    private static String chosenPort(String endpoint) {
        ObjectNode pec = JSON.createObjectNode();
        pec.put("NetworkID", NET);
        pec.put("EndpointID", endpoint);
        pec.putObject("Options").putArray("com.docker.network.portmap").addObject().put("Proto", 6).put("IP", "")
                .put("Port", 80).put("HostIP", "").put("HostPort", 0).put("HostPortEnd", 0);
        return pec.toString();
    }

    private static void ok(DockerPlugin plugin, String method, String body) {
        DockerPlugin.Reply r = plugin.handle(method, body);
        assertThat(r.status()).as("%s: %s", method, r.json()).isEqualTo(200);
    }
}
