package dev.gatun.cli.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.GatunException;
import dev.gatun.cli.testing.JsonFuzz;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Docker plugin's JSON entry point fed malformed, truncated and oversized versions of the
 * calls dockerd makes (JsonFuzz), against a driver that knows one network and one endpoint and
 * refuses every change (and has no namespace to choose a free port in): each answer is JSON, an error has Docker's {"Err": sentence}, a request
 * refused as bad (400, 404) asked the driver for no change, and none ends in an unexpected
 * exception (which the plugin would log with its trace and answer 500).
 */
class DockerPluginPropertiesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NET = "8f2d7a1c4b3e" + "0".repeat(52);
    private static final String EP = "5e6f7a8b9c0d" + "1".repeat(52);
    private static final Set<String> CHANGES = Set.of("createNetwork", "deleteNetwork", "attach", "detachOwner", "detach",
            "publish", "publishAll", "unpublish", "repair", "repairOwnRuleset", "repairElements");

    private record Call(String method, String body) {}

    private static final List<Call> CALLS = List.of(
            new Call("NetworkDriver.CreateNetwork", """
                    {"NetworkID": "%s", "Options": {"com.docker.network.generic": {"gatun.icc": "false", "gatun.mtu": "1400"},
                     "com.docker.network.enable_ipv6": false}, "IPv4Data": [{"AddressSpace": "LocalDefault",
                     "Pool": "10.89.0.0/24", "Gateway": "10.89.0.1/24"}], "IPv6Data": []}""".formatted(NET)),
            new Call("NetworkDriver.CreateEndpoint", """
                    {"NetworkID": "%s", "EndpointID": "%s", "Interface": {"Address": "10.89.0.2/24", "AddressIPv6": "",
                     "MacAddress": ""}, "Options": {"com.docker.network.endpoint.exposedports": [{"Proto": 6, "Port": 80}],
                     "com.docker.network.portmap": [{"Proto": 6, "IP": "", "Port": 80, "HostIP": "", "HostPort": 8080,
                     "HostPortEnd": 8080}]}}""".formatted(NET, EP)),
            new Call("NetworkDriver.Join", """
                    {"NetworkID": "%s", "EndpointID": "%s", "SandboxKey": "/var/run/docker/netns/abc", "Options": {}}"""
                    .formatted(NET, EP)),
            new Call("NetworkDriver.ProgramExternalConnectivity", """
                    {"NetworkID": "%s", "EndpointID": "%s", "Options": {"com.docker.network.endpoint.exposedports":
                     [{"Proto": 6, "Port": 80}, {"Proto": 17, "Port": 53}], "com.docker.network.portmap": [{"Proto": 6,
                     "IP": "", "Port": 80, "HostIP": "", "HostPort": 8080, "HostPortEnd": 8080}, {"Proto": 17, "IP": "",
                     "Port": 53, "HostIP": "127.0.0.1", "HostPort": 5353, "HostPortEnd": 5353}, {"Proto": 6, "IP": "",
                     "Port": 443, "HostIP": "::", "HostPort": 0, "HostPortEnd": 0}]}}""".formatted(NET, EP)),
            new Call("NetworkDriver.RevokeExternalConnectivity", """
                    {"NetworkID": "%s", "EndpointID": "%s"}""".formatted(NET, EP)),
            new Call("NetworkDriver.EndpointOperInfo", """
                    {"NetworkID": "%s", "EndpointID": "%s"}""".formatted(NET, EP)),
            new Call("NetworkDriver.DeleteEndpoint", """
                    {"NetworkID": "%s", "EndpointID": "%s"}""".formatted(NET, EP)),
            new Call("NetworkDriver.DeleteNetwork", """
                    {"NetworkID": "%s"}""".formatted(NET)),
            new Call("NetworkDriver.Leave", """
                    {"NetworkID": "%s", "EndpointID": "%s"}""".formatted(NET, EP)));

    @Provide
    Arbitrary<Call> calls() {
        return Arbitraries.of(CALLS).flatMap(c -> JsonFuzz.mutated(List.of(c.body())).map(b -> new Call(c.method(), b)));
    }

    @Property(tries = 1000)
    void everyAnswerIsJsonAndABadRequestChangesNothing(@ForAll("calls") Call call) throws Exception {
        List<String> changes = new CopyOnWriteArrayList<>();
        List<String> log = new CopyOnWriteArrayList<>();
        DockerPlugin plugin = new DockerPlugin(driver(changes), log::add);

        DockerPlugin.Reply reply = plugin.handle(call.method(), call.body());

        JsonNode answer = JSON.readTree(reply.json());
        assertThat(log).as("what the plugin logged").noneMatch(line -> line.contains("\tat "));
        if (reply.status() != 200) {
            assertThat(answer.path("Err").asText()).as(reply.json()).isNotBlank();
        }
        if (reply.status() == 400 || reply.status() == 404) {
            assertThat(changes).as("changes asked for by a refused request: " + reply.json()).isEmpty();
        }
    }

    /**
     * A failure that may pass if tried again is 503, not a bug's 500: the same class the local
     * API answers with Retry-After (dockerd reads only the sentence).
     */
    @Test
    void aFailureThatMayPassIs503() throws Exception {
        List<String> changes = new CopyOnWriteArrayList<>();
        DockerPlugin plugin = new DockerPlugin(driver(changes, change -> new ReplyTimeoutException(change, Duration.ofSeconds(5))),
                line -> {});
        String body = """
                {"NetworkID": "%s", "EndpointID": "%s", "Options": {"com.docker.network.endpoint.exposedports":
                 [{"Proto": 6, "Port": 80}], "com.docker.network.portmap": [{"Proto": 6, "IP": "", "Port": 80,
                 "HostIP": "", "HostPort": 8080, "HostPortEnd": 8080}]}}""".formatted(NET, EP);

        DockerPlugin.Reply reply = plugin.handle("NetworkDriver.ProgramExternalConnectivity", body);

        assertThat(changes).as("the plugin asked for the publish").contains("publishAll");
        assertThat(reply.status()).as(reply.json()).isEqualTo(503);
        assertThat(JSON.readTree(reply.json()).path("Err").asText()).contains("no reply from the kernel to publish");
    }

    /** One network (NET's gatun name) with one endpoint (EP); every change is recorded, then refused. */
    static GatunDriver driver(List<String> changes) {
        return driver(changes, change -> new GatunException("the test driver changes nothing (" + change + ")"));
    }

    /** As {@link #driver(List)}, each change refused with the failure {@code refusal} makes of its name. */
    static GatunDriver driver(List<String> changes, Function<String, ? extends GatunException> refusal) {
        Network network = new Network(DockerPlugin.networkName(NET), "gt-" + DockerPlugin.networkName(NET),
                MacAddress.parse("02:42:0a:59:00:01"), List.of(Prefix.parse("10.89.0.0/24")),
                List.of(InetAddress.ofLiteral("10.89.0.1")), true, false, true, 1500);
        Endpoint endpoint = new Endpoint(network.name(), "/var/run/docker/netns/abc", "eth0", "gv0123456789",
                InetAddress.ofLiteral("10.89.0.2"), null, MacAddress.parse("02:42:0a:59:00:02"), EP);
        Map<String, StandInDriver.Answer> answers = new HashMap<>();
        for (String change : CHANGES) {
            answers.put(change, args -> {
                changes.add(change);
                throw refusal.apply(change);
            });
        }
        answers.put("networks", args -> List.of(network));
        answers.put("endpoints", args -> List.of(endpoint));
        for (String empty : List.of("published", "hostPortsInUse", "foreignDrops")) {
            answers.put(empty, args -> List.of());
        }
        // Choosing a free host port reads the host namespace's sockets: ChosenPortsIT's, in a namespace of its own.
        answers.put("host", args -> {
            throw new GatunException("the test driver has no namespace to choose a free port in");
        });
        answers.put("listen", args -> null);
        answers.put("close", args -> null);
        return StandInDriver.answering(answers);
    }
}
