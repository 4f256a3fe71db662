package dev.gatun.cli.netavark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plugin's verbs without a kernel: what {@code create} completes, and every refusal, as
 * netavark's error document, before the driver is asked anything (a stand-in driver fails the
 * test on any call it was not told to expect).
 */
class NetavarkPluginTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NETWORK = """
            {"name": "web", "id": "ab12", "driver": "gatun", "subnets": [], "ipv6_enabled": false,
             "internal": false, "dns_enabled": false, "options": {}%s}""";

    /** A driver that may only list networks: {@code existing}. */
    private static Drivers listing(List<Network> existing) {
        return Drivers.of(StandInDriver.answering(Map.of("networks", args -> existing)));
    }

    /** A driver that fails the test on any call. */
    private static final Drivers UNTOUCHED = Drivers.of(StandInDriver.answering(Map.of()));

    private static JsonNode ok(NetavarkPlugin.Outcome o) throws Exception {
        assertThat(o.exitCode()).as(new String(o.stdout(), StandardCharsets.UTF_8)).isZero();
        return JSON.readTree(o.stdout());
    }

    private static String error(NetavarkPlugin.Outcome o) throws Exception {
        assertThat(o.exitCode()).isEqualTo(1);
        JsonNode doc = JSON.readTree(o.stdout());
        assertThat(doc.size()).as("netavark's error document has one field").isEqualTo(1);
        return doc.path("error").asText();
    }

    private static NetavarkPlugin.Outcome run(Drivers d, String stdin, String... args) {
        return NetavarkPlugin.run(List.of(args), stdin.getBytes(StandardCharsets.UTF_8), d);
    }

    @Test
    void infoGivesTheApiVersion() throws Exception {
        JsonNode info = ok(run(UNTOUCHED, "", "info"));
        assertThat(info.path("api_version").asText()).isEqualTo("1.0.0");
        assertThat(info.path("version").asText()).isNotEmpty();
    }

    @Test
    void createChoosesAFreeSubnetTheGatewayAndTheBridge() throws Exception {
        Network taken = new Network("other", "gatun-other", MacAddress.parse("02:00:00:00:00:01"),
                List.of(Prefix.parse("10.90.0.0/24"), Prefix.parse("10.90.1.0/25")), List.of(), true, false, true, 1500);
        JsonNode n = ok(run(listing(List.of(taken)), NETWORK.formatted(""), "create"));
        assertThat(n.path("subnets").get(0).path("subnet").asText()).isEqualTo("10.90.2.0/24");
        assertThat(n.path("subnets").get(0).path("gateway").asText()).isEqualTo("10.90.2.1");
        assertThat(n.path("network_interface").asText()).isEqualTo("gatun-web");
        assertThat(n.path("ipam_options").path("driver").asText()).isEqualTo("host-local");
        assertThat(n.path("id").asText()).as("name, id and driver stay as Podman made them").isEqualTo("ab12");
    }

    @Test
    void createKeepsAGivenSubnetAndAddsItsGateway() throws Exception {
        String given = NETWORK.formatted("").replace("\"subnets\": []", "\"subnets\": [{\"subnet\": \"10.77.0.0/16\"}]")
                .replace("\"options\": {}", "\"options\": {\"gatun.icc\": \"false\", \"gatun.bridge\": \"br-web\"}");
        JsonNode n = ok(run(listing(List.of()), given, "create"));
        assertThat(n.path("subnets").get(0).path("gateway").asText()).isEqualTo("10.77.0.1");
        assertThat(n.path("network_interface").asText()).isEqualTo("br-web");
    }

    @Test
    void createRefusesWhatAGatunNetworkCannotBe() throws Exception {
        String base = NETWORK.formatted("");
        assertThat(error(run(UNTOUCHED, base.replace("\"dns_enabled\": false", "\"dns_enabled\": true"), "create")))
                .contains("--disable-dns");
        assertThat(error(run(UNTOUCHED, base.replace("\"options\": {}", "\"options\": {\"colour\": \"blue\"}"),
                "create"))).contains("unknown option colour");
        assertThat(error(run(UNTOUCHED, base.replace("\"options\": {}", "\"options\": {\"gatun.mtu\": \"big\"}"),
                "create"))).contains("gatun.mtu=big");
        assertThat(error(run(UNTOUCHED, base.replace("\"subnets\": []", "\"subnets\": [{\"subnet\": \"10.1.0.0/33\"}]"),
                "create"))).contains("10.1.0.0/33");
        assertThat(error(run(UNTOUCHED, base.replace("\"subnets\": []",
                "\"subnets\": [{\"subnet\": \"10.1.0.0/24\", \"gateway\": \"10.2.0.1\"}]"), "create")))
                .contains("gateway 10.2.0.1");
        assertThat(error(run(UNTOUCHED, base.replace("\"ipv6_enabled\": false", "\"ipv6_enabled\": true"), "create")))
                .contains("--ipv6");
        assertThat(error(run(UNTOUCHED, base + ",", "create"))).contains("not JSON");
        assertThat(error(run(UNTOUCHED, "", "create"))).contains("no JSON on stdin");
        assertThat(error(run(UNTOUCHED, base.replace("\"options\": {}", "\"options\": {}, \"ipam_options\": {\"driver\": \"dhcp\"}"), "create")))
                .contains("IPAM driver dhcp");
    }

    @Test
    void createRefusesASubnetAnotherGatunNetworkHas() throws Exception {
        Network taken = new Network("other", "gatun-other", MacAddress.parse("02:00:00:00:00:01"),
                List.of(Prefix.parse("10.77.0.0/16")), List.of(), true, false, true, 1500);
        String given = NETWORK.formatted("").replace("\"subnets\": []", "\"subnets\": [{\"subnet\": \"10.77.5.0/24\"}]");
        assertThat(error(run(listing(List.of(taken)), given, "create"))).contains("overlaps 10.77.0.0/16");
    }

    private static String setup(String mappings, String ips) {
        return """
                {"container_id": "c0ffee", "container_name": "c", "network": {"name": "web", "id": "1", "driver": "gatun",
                 "subnets": [{"subnet": "10.90.0.0/24", "gateway": "10.90.0.1"}]},
                 "network_options": {"interface_name": "eth0", "static_ips": [%s]}, "port_mappings": [%s]}"""
                .formatted(ips, mappings);
    }

    @Test
    void setupRefusesBadInputBeforeAskingTheDriver() throws Exception {
        String ns = "/proc/self/ns/net";
        assertThat(error(run(UNTOUCHED, setup("{\"container_port\": 80, \"host_port\": 70000, \"protocol\": \"tcp\"}",
                "\"10.90.0.2\""), "setup", ns))).contains("70000");
        assertThat(error(run(UNTOUCHED, setup("{\"container_port\": 80, \"host_port\": 65530, \"range\": 10}",
                "\"10.90.0.2\""), "setup", ns))).contains("range 10");
        assertThat(error(run(UNTOUCHED, setup("{\"container_port\": 80, \"host_port\": 8080, \"protocol\": \"icmp\"}",
                "\"10.90.0.2\""), "setup", ns))).contains("icmp");
        assertThat(error(run(UNTOUCHED, setup("", "\"10.91.0.2\""), "setup", ns))).contains("10.91.0.2");
        assertThat(error(run(UNTOUCHED, setup("", ""), "setup", ns))).contains("no IPv4 address");
        assertThat(error(run(UNTOUCHED, setup("", "\"10.90.0.2\""), "setup"))).contains("needs the path");
        assertThat(error(run(UNTOUCHED, setup("", "\"10.90.0.2\""), "setup", "/no/such/netns"))).contains("/no/such/netns");
        assertThat(error(run(UNTOUCHED, setup("", "\"10.90.0.2\"").replace("c0ffee", "../x"), "setup", ns)))
                .contains("container_id");
        assertThat(error(run(UNTOUCHED, "{}", "launch"))).contains("unknown subcommand 'launch'");
        assertThat(error(run(UNTOUCHED, ""))).contains("no subcommand");
    }

    @Test
    void aMappingIsOneSpecPerProtocolOverItsRange() {
        NetavarkSetup s = NetavarkSetup.parse(read(setup("{\"container_port\": 53, \"host_port\": 5353, \"range\": 3, "
                + "\"protocol\": \"tcp,udp\", \"host_ip\": \"127.0.0.1\"}", "\"10.90.0.2\"")), true);
        InetAddress lo = InetAddress.getLoopbackAddress();
        assertThat(s.mappings().getFirst().specs(true)).containsExactly(
                new PortSpec(lo, 5353, 5355, 53, 55, Protocol.TCP), new PortSpec(lo, 5353, 5355, 53, 55, Protocol.UDP));
        assertThat(s.mappings().getFirst().specs(false)).as("an IPv4 host address goes to no IPv6 container address")
                .isEmpty();
        assertThat(s.owner()).isEqualTo("c0ffee/eth0");
    }

    private static JsonNode read(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
