package dev.gatun.cli.cni;

import dev.gatun.cli.testing.CniExec;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Traffic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the main plugin's network options of cli/README.md do in the kernel, each set through a
 * CNI config and judged by real traffic and the kernel's own view ({@code ip}, sysfs): ipMasq,
 * icc, internal, mtu; of the IPAM routes only the default one installed; the bridge kept after
 * its last container. Without a serve: the served path runs the same code ({@link CniPluginServedIT}).
 */
@ExtendWith(FreshNamespaces.class)
class CniNetworkOptionsIT {

    /** Where the outside namespace of {@link Lab} listens. */
    static final String OUTSIDE = "192.0.2.2";

    @TempDir
    Path dir;

    /** A main-plugin config without ports, with these top-level keys set. */
    static String config(CniExec cni, String name, String subnet, Map<String, Object> keys) {
        return CniExec.with(cni.config("1.0.0", name, subnet, null), keys);
    }

    /** The source address the outside sees for a connection from {@code from}; the round trip must pass. */
    static String sourceSeenOutside(ServerSocketChannel server, NetworkNamespace from) throws IOException {
        try (SocketChannel client = Traffic.connect(from, OUTSIDE, 7000);
             SocketChannel accepted = server.accept()) {
            Traffic.roundTrip(client, accepted, "to the outside");
            return ((InetSocketAddress) accepted.getRemoteAddress()).getAddress().getHostAddress();
        }
    }

    static String sysfs(NetworkNamespace ns, String ifname, String attribute) {
        return Oracle.in(ns, "cat", "/sys/class/net/" + ifname + "/" + attribute).strip();
    }

    @Test
    void ipMasqHidesTheContainerAddressFromTheOutside(NetworkNamespace host, NetworkNamespace outside,
                                                      NetworkNamespace c1, NetworkNamespace c2) throws IOException {
        CniExec cni = new CniExec(host, dir);
        Lab.connectOutside(host, outside, "10.110.0.0/24", "10.111.0.0/24");
        cni.call("ADD", "c1", c1, "eth0", config(cni, "masq", "10.110.0.0/24", Map.of("ipMasq", true))).ok();
        cni.call("ADD", "c2", c2, "eth0", config(cni, "plain", "10.111.0.0/24", Map.of("ipMasq", false))).ok();
        try (ServerSocketChannel server = Traffic.listen(outside, "0.0.0.0", 7000)) {
            assertThat(sourceSeenOutside(server, c1)).as("ipMasq true: the host's address").isEqualTo(Lab.HOST_ADDRESS);
            assertThat(sourceSeenOutside(server, c2)).as("ipMasq false: the container's own").isEqualTo("10.111.0.2");
        }
    }

    @Test
    void iccFalseKeepsTheContainersOfABridgeApart(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2,
                                                  NetworkNamespace c3, NetworkNamespace c4) throws IOException {
        CniExec cni = new CniExec(host, dir);
        String apart = config(cni, "apart", "10.112.0.0/24", Map.of("icc", false));
        String together = config(cni, "together", "10.113.0.0/24", Map.of("icc", true));
        JsonNode a1 = cni.call("ADD", "c1", c1, "eth0", apart).ok().json();
        cni.call("ADD", "c2", c2, "eth0", apart).ok();
        JsonNode t1 = cni.call("ADD", "c3", c3, "eth0", together).ok().json();
        cni.call("ADD", "c4", c4, "eth0", together).ok();
        assertThat(sysfs(host, a1.path("interfaces").get(1).path("name").asText(), "brport/isolated")).isEqualTo("1");
        assertThat(sysfs(host, t1.path("interfaces").get(1).path("name").asText(), "brport/isolated")).isEqualTo("0");

        try (ServerSocketChannel server = Traffic.listen(c3, "0.0.0.0", 80);
             SocketChannel client = Traffic.connect(c4, "10.113.0.2", 80);
             SocketChannel accepted = server.accept()) {
            Traffic.roundTrip(client, accepted, "icc true: container to container");
        }
        try (ServerSocketChannel server = Traffic.listen(c1, "0.0.0.0", 80)) {
            assertThatThrownBy(() -> Traffic.connect(c2, "10.112.0.2", 80).close())
                    .as("icc false: container to container").isNotNull();
        }
    }

    @Test
    void anInternalNetworkHasNoWayOut(NetworkNamespace host, NetworkNamespace outside, NetworkNamespace c1,
                                      NetworkNamespace c2) throws IOException {
        CniExec cni = new CniExec(host, dir);
        Lab.connectOutside(host, outside, "10.114.0.0/24", "10.115.0.0/24");
        cni.call("ADD", "c1", c1, "eth0", config(cni, "closed", "10.114.0.0/24", Map.of("internal", true))).ok();
        cni.call("ADD", "c2", c2, "eth0", config(cni, "open", "10.115.0.0/24", Map.of("internal", false))).ok();
        assertThat(Oracle.in(c2, "ip", "-4", "route", "show")).contains("default via 10.115.0.1");
        assertThat(Oracle.in(c1, "ip", "-4", "route", "show")).as("internal: no default route")
                .contains("10.114.0.0/24").doesNotContain("default");
        try (ServerSocketChannel server = Traffic.listen(outside, "0.0.0.0", 7000)) {
            assertThat(sourceSeenOutside(server, c2)).isEqualTo(Lab.HOST_ADDRESS);
            // Even with a default route added by hand, gatun's firewall lets nothing of it out.
            Oracle.in(c1, "ip", "route", "add", "default", "via", "10.114.0.1");
            assertThatThrownBy(() -> Traffic.connect(c1, OUTSIDE, 7000).close()).as("internal: out").isNotNull();
        }
    }

    /** {@code "counters": true} makes a network whose mappings count their traffic; without it, none does. */
    @Test
    void countersMakeACountedNetwork(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        CniExec cni = new CniExec(host, dir);
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config(cni, "counted", "10.118.0.0/24", Map.of("counters", true)))
                .ok().json();
        JsonNode d = cni.call("ADD", "c2", c2, "eth0", config(cni, "plain", "10.119.0.0/24", Map.of())).ok().json();
        String counted = Oracle.in(host, "nft", "list", "set", "inet", "gatun", "counted");
        assertThat(counted).contains("\"" + r.path("interfaces").get(0).path("name").asText() + "\"")
                .doesNotContain("\"" + d.path("interfaces").get(0).path("name").asText() + "\"");
    }

    @Test
    void mtuIsSetOnTheBridgeBothVethEndsAndTheContainer(NetworkNamespace host, NetworkNamespace c1, NetworkNamespace c2) {
        CniExec cni = new CniExec(host, dir);
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config(cni, "small", "10.116.0.0/24", Map.of("mtu", 1400))).ok().json();
        assertThat(sysfs(host, r.path("interfaces").get(0).path("name").asText(), "mtu")).as("bridge").isEqualTo("1400");
        assertThat(sysfs(host, r.path("interfaces").get(1).path("name").asText(), "mtu")).as("host end").isEqualTo("1400");
        assertThat(sysfs(c1, "eth0", "mtu")).as("container end").isEqualTo("1400");
        // The control: a network without mtu has the kernel's default.
        JsonNode d = cni.call("ADD", "c2", c2, "eth0", config(cni, "usual", "10.117.0.0/24", Map.of())).ok().json();
        assertThat(sysfs(host, d.path("interfaces").get(1).path("name").asText(), "mtu")).isEqualTo("1500");
        assertThat(sysfs(c2, "eth0", "mtu")).isEqualTo("1500");
    }

    @Test
    void ofTheIpamRoutesOnlyTheDefaultOneIsInstalled(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = new CniExec(host, dir);
        List<Map<String, String>> routes = List.of(Map.of("dst", "0.0.0.0/0"), Map.of("dst", "10.200.0.0/16"),
                Map.of("dst", "198.51.100.0/24", "gw", "10.118.0.1"));
        String config = config(cni, "routes", "10.118.0.0/24", Map.of("ipam", Map.of("type", "host-local",
                "ranges", List.of(List.of(Map.of("subnet", "10.118.0.0/24"))), "routes", routes,
                "dataDir", dir.resolve("ipam").toString())));
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        assertThat(r.path("routes").findValuesAsText("dst")).as("passed on in the result")
                .contains("0.0.0.0/0", "10.200.0.0/16", "198.51.100.0/24");
        assertThat(Oracle.in(c1, "ip", "-4", "route", "show"))
                .contains("default via 10.118.0.1").contains("10.118.0.0/24")
                .doesNotContain("10.200.0.0").doesNotContain("198.51.100.0");
    }

    @Test
    void theBridgeStaysAfterItsLastContainerWithItsMacAndAddress(NetworkNamespace host, NetworkNamespace c1) {
        CniExec cni = new CniExec(host, dir);
        String config = config(cni, "keep", "10.119.0.0/24", Map.of());
        JsonNode r = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        String bridge = r.path("interfaces").get(0).path("name").asText();
        String mac = r.path("interfaces").get(0).path("mac").asText();
        String hostEnd = r.path("interfaces").get(1).path("name").asText();
        assertThat(Oracle.in(host, "ip", "-o", "link", "show", "master", bridge)).contains(hostEnd);

        cni.call("DEL", "c1", c1, "eth0", CniExec.withPrevResult(config, r)).ok();
        assertThat(CniPluginIT.links(host)).as("the DEL removed the veth").doesNotContain(hostEnd);
        assertThat(Oracle.in(host, "ip", "-o", "link", "show", bridge)).as("the bridge after its last container")
                .contains(mac);
        assertThat(sysfs(host, bridge, "addr_assign_type")).isEqualTo("3");
        assertThat(Oracle.in(host, "ip", "-o", "-4", "addr", "show", bridge)).contains("10.119.0.1/24");
        assertThat(GatunCli.ok("--netns", host.name(), "net", "ls").out()).contains("keep");

        JsonNode again = cni.call("ADD", "c1", c1, "eth0", config).ok().json();
        assertThat(again.path("interfaces").get(0).path("mac").asText()).as("the next container's gateway MAC")
                .isEqualTo(mac);
    }
}
