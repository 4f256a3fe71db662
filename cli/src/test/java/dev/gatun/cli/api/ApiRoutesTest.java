package dev.gatun.cli.api;

import dev.gatun.cli.wire.CommandNames;
import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeWire;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.RetryableException;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.json.Json;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.service.GatunService;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The local API's paths as typed requests, run by the service over a stand-in driver that
 * records what it was asked: every JSON field reaches the driver as the value it is, never as
 * an option. No root needed; what reaches the kernel is LocalApiIT's.
 */
class ApiRoutesTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final InetAddress C2 = Prefix.address("10.88.0.2");

    private final List<String> calls = new ArrayList<>();
    private final List<Object[]> arguments = new ArrayList<>();

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** What a driver made of a spec: the network or endpoint the spec asks for. */
    static Object made(Object[] args) {
        if (args != null && args.length == 1 && args[0] instanceof NetworkSpec n) {
            return new Network(n.name(), "gatun-" + n.name(), MacAddress.parse("02:00:00:00:00:01"), List.of(n.subnet4()),
                    List.of(), n.icc(), n.internal(), n.masquerade(), 1500);
        }
        if (args != null && args.length == 1 && args[0] instanceof EndpointSpec e) {
            return new Endpoint(e.network(), "c1", "eth0", "veth0", e.ip(), null, MacAddress.parse("02:00:00:00:00:02"), e.owner());
        }
        return null;
    }

    /** A driver that answers every call the routes make with {@code result} (or what it made), and records each. */
    private GatunService service(Object result) {
        StandInDriver.Answer recorded = args -> result != null ? result : made(args);
        Map<String, StandInDriver.Answer> answers = new java.util.HashMap<>();
        for (String m : List.of("createNetwork", "deleteNetwork", "networks", "attach", "detach", "publish", "unpublish",
                "published", "allPublished")) {
            answers.put(m, args -> {
                calls.add(m);
                arguments.add(args == null ? new Object[0] : args);
                return recorded.answer(args);
            });
        }
        GatunDriver d = StandInDriver.answering(answers);
        return new GatunService(() -> {
            throw new AssertionError("no route here needs the host namespace");
        }, Drivers.of(d));
    }

    private ApiRoutes.Answer run(String method, String path, Map<String, String> query, String body, Object result) {
        return ApiRoutes.route(method, path, query, body == null ? null : json(body)).run(service(result));
    }

    @Test
    void publishPassesEveryValueAsAValue() {
        PortMapping made = new PortMapping("n1", Protocol.TCP, null, 8080, C2, 80, "--json");
        ApiRoutes.Answer a = run("POST", "/v1/networks/n1/ports", Map.of(),
                "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\", \"53/udp\"], \"owner\": \"--json\"}", List.of(made));
        assertThat(calls).containsExactly("publish");
        Object[] args = arguments.getFirst();
        assertThat(args[0]).isEqualTo(new PortRequest("n1", C2, List.of(PortSpec.parse("8080:80"), PortSpec.parse("53/udp")),
                "--json"));
        assertThat(args[1]).isEqualTo(HostPortCheck.CHECK);
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.document()).isEqualTo(Json.mappings(List.of(made)));
    }

    /** Only an unpublish that drains may wait long, and only it is answered aside (LocalApi). */
    @Test
    void onlyAnUnpublishThatDrainsWaits() {
        String drain = "{\"containerIp\": \"10.88.0.2\", \"drain\": true}";
        assertThat(ApiRoutes.route("DELETE", "/v1/networks/n1/ports", Map.of(), json(drain)).waits()).isTrue();
        assertThat(ApiRoutes.route("DELETE", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"10.88.0.2\"}")).waits()).isFalse();
        assertThat(ApiRoutes.route("POST", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"10.88.0.2\", \"ports\": [\"80\"]}")).waits()).isFalse();
        assertThat(CommandNames.waitsOnConnections(List.of("--netns", "x", "unpublish", "n1", "10.88.0.2", "--drain"))).isTrue();
        assertThat(CommandNames.waitsOnConnections(List.of("unpublish", "n1", "10.88.0.2"))).isFalse();
        assertThat(CommandNames.waitsOnConnections(List.of("publish", "n1", "10.88.0.2", "-p", "80", "--drain"))).isFalse();
    }

    /** On the calls socket, only a publish and an unpublish that does not drain run on the accepting thread. */
    @Test
    void onlyPublishesAndUnpublishesThatDoNotDrainRunAtOnce() {
        assertThat(CommandNames.runsAtOnce(List.of("publish", "n1", "10.88.0.2", "-p", "80"))).isTrue();
        assertThat(CommandNames.runsAtOnce(List.of("--json", "--netns", "x", "publish", "n1", "10.88.0.2", "-p", "80")))
                .isTrue();
        assertThat(CommandNames.runsAtOnce(List.of("unpublish", "n1", "10.88.0.2"))).isTrue();
        assertThat(CommandNames.runsAtOnce(List.of("unpublish", "n1", "10.88.0.2", "--drain"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("--json", "ls"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("--netns", "x", "ruleset"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("doctor"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("attach", "n1", "c1"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("detach", "n1", "c1"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("net", "create", "n2", "--subnet", "10.89.0.0/16"))).isFalse();
        assertThat(CommandNames.runsAtOnce(List.of("net", "publish"))).as("net, with a subcommand named like one").isFalse();
    }

    @Test
    void checkHostPortsFalseSkipsTheCheckAndOnlyFalseDoes() {
        run("POST", "/v1/networks/n1/ports", Map.of(),
                "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"checkHostPorts\": false}", List.of());
        run("POST", "/v1/networks/n1/ports", Map.of(),
                "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"checkHostPorts\": true}", List.of());
        run("POST", "/v1/networks/n1/ports", Map.of(), "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"]}", List.of());
        assertThat(arguments).extracting(a -> a[1]).containsExactly(HostPortCheck.SKIP, HostPortCheck.CHECK, HostPortCheck.CHECK);
    }

    @Test
    void aValueThatLooksLikeAnOptionIsAValueOrRefusedButNeverObeyed() {
        run("DELETE", "/v1/networks/n1/ports", Map.of(), "{\"containerIp\": \"10.88.0.2\", \"owner\": \"--force\"}", List.of());
        assertThat(calls).containsExactly("unpublish");
        assertThat(arguments.getFirst()).containsExactly(new PortRequest("n1", C2, List.of(), "--force"));
        // A port spec that is an option's name is a bad port spec: 400, nothing called.
        InvalidInputException e = catchThrowableOfType(InvalidInputException.class, () -> run("DELETE",
                "/v1/networks/n1/ports", Map.of(), "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"--owner\"]}", List.of()));
        assertThat(e.getMessage()).contains("--owner");
        assertThat(ErrorStatus.of(e)).isEqualTo(400);
        assertThat(calls).hasSize(1);
    }

    @Test
    void networkCreateTakesEveryField() {
        run("POST", "/v1/networks", Map.of(), "{\"name\": \"web\", \"subnets\": [\"10.88.0.0/16\", \"fd00:88::/64\"],"
                + " \"bridge\": \"br-web\", \"gateway\": \"10.88.0.254\", \"mac\": \"02:00:00:00:00:01\", \"mtu\": 1400,"
                + " \"icc\": false, \"internal\": true}", null);
        assertThat(calls).containsExactly("createNetwork");
        NetworkSpec spec = (NetworkSpec) arguments.getFirst()[0];
        assertThat(spec.name()).isEqualTo("web");
        assertThat(spec.subnet4()).isEqualTo(Prefix.parse("10.88.0.0/16"));
        assertThat(spec.subnet6()).isEqualTo(Prefix.parse("fd00:88::/64"));
        assertThat(spec.bridge()).isEqualTo("br-web");
        assertThat(spec.gateway4()).isEqualTo(Prefix.address("10.88.0.254"));
        assertThat(spec.mac()).hasToString("02:00:00:00:00:01");
        assertThat(spec.mtu()).isEqualTo(1400);
        assertThat(spec.icc()).isFalse();
        assertThat(spec.internal()).isTrue();
    }

    @Test
    void networkCreateDefaultsAreTheCommandsDefaults() {
        run("POST", "/v1/networks", Map.of(), "{\"name\": \"web\", \"subnets\": [\"10.88.0.0/16\"]}", null);
        NetworkSpec spec = (NetworkSpec) arguments.getFirst()[0];
        assertThat(spec).isEqualTo(NetworkSpec.named("web").subnet4(Prefix.parse("10.88.0.0/16")).build());
        InvalidInputException none = catchThrowableOfType(InvalidInputException.class,
                () -> run("POST", "/v1/networks", Map.of(), "{\"name\": \"web\"}", null));
        assertThat(none.getMessage()).contains("network web needs a subnet");
    }

    @ParameterizedTest(name = "{0} {1}?{2}")
    @CsvSource(delimiter = '|', value = {
            "GET    | /v1/networks    |            | networks          | ",
            "DELETE | /v1/networks/n1 | force=true | deleteNetwork     | n1 true",
            "DELETE | /v1/networks/n1 |            | deleteNetwork     | n1 false",
            "GET    | /v1/ports       | network=n1 | published         | n1",
            "GET    | /v1/ports/      |            | allPublished      | "})
    void pathsWithoutABody(String method, String path, String query, String expected, String args) {
        Map<String, String> q = query == null ? Map.of() : Map.of(query.split("=")[0], query.split("=")[1]);
        Object empty = method.equals("DELETE") ? null : List.of();
        run(method, path, q, null, empty);
        assertThat(String.join(" ", calls)).isEqualTo(expected);
        assertThat(Arrays.stream(arguments.getFirst()).map(String::valueOf).toList())
                .isEqualTo(args == null ? List.of() : List.of(args.split(" ")));
    }

    @Test
    void aDetachNamesTheNamespaceThatDoesNotExist() {
        InvalidInputException e = catchThrowableOfType(InvalidInputException.class,
                () -> run("DELETE", "/v1/networks/n1/endpoints/no-such-ns-here", Map.of("ifname", "eth1"), null, null));
        assertThat(e.getMessage()).contains("network namespace no-such-ns-here does not exist");
        assertThat(calls).isEmpty();
    }

    @Test
    void anAttachToTheTestsOwnNamespaceReachesTheDriverWithEveryField() {
        NetworkNamespace self = NetworkNamespace.current();
        // The path form of a namespace is a body field, never part of the URL.
        var a = ApiRoutes.route("POST", "/v1/networks/n1/endpoints", Map.of(), json("{\"containerNetns\": \"" + self.path()
                + "\", \"ip\": \"10.88.0.9\", \"ifname\": \"eth1\", \"mac\": \"02:00:00:00:00:09\", \"owner\": \"web-1\"}"));
        a.run(service(null));
        assertThat(calls).containsExactly("attach");
        var spec = (EndpointSpec) arguments.getFirst()[0];
        assertThat(spec.network()).isEqualTo("n1");
        assertThat(spec.ip()).isEqualTo(Prefix.address("10.88.0.9"));
        assertThat(spec.ifname()).isEqualTo("eth1");
        assertThat(spec.owner()).isEqualTo("web-1");
        assertThat(spec.mac()).hasToString("02:00:00:00:00:09");
    }

    @ParameterizedTest(name = "{0} {1} {2}: {3}")
    @CsvSource(delimiter = '|', value = {
            "GET    | /v2/networks          |                                          | 404 | paths start with /v1/",
            "GET    | /v1/nothing           |                                          | 404 | no such path: /v1/nothing",
            "PUT    | /v1/networks          |                                          | 405 | allowed: GET, POST",
            "GET    | /v1/networks/n1       |                                          | 405 | allowed: DELETE",
            "POST   | /v1/networks          |                                          | 400 | needs a JSON object body",
            "POST   | /v1/networks          | []                                       | 400 | needs a JSON object body",
            "POST   | /v1/networks          | {\"name\": \"a\", \"colour\": \"red\"}   | 400 | unknown field \"colour\"",
            "POST   | /v1/networks          | {\"name\": 7}                            | 400 | \"name\" must be a string, not 7",
            "POST   | /v1/networks          | {\"name\": \"a\", \"mtu\": \"big\"}      | 400 | \"mtu\" must be a whole number",
            "POST   | /v1/networks          | {\"name\": \"a\", \"icc\": 1}            | 400 | \"icc\" must be true or false",
            "POST   | /v1/networks          | {\"name\": \"a\", \"subnets\": \"x\"}    | 400 | \"subnets\" must be an array of strings",
            "POST   | /v1/networks          | {\"subnets\": [\"10.0.0.0/8\"]}          | 400 | \"name\" is required",
            "POST   | /v1/networks          | {\"name\": \"\"}                         | 400 | an empty name",
            "POST   | /v1/networks/n1/ports | {\"containerIp\": \"10.88.0.2\"}         | 400 | must list at least one port",
            "POST   | /v1/networks/n1/ports | {\"ports\": [\"80\"]}                    | 400 | \"containerIp\" is required",
            "GET    | /v1/ruleset           | {}                                       | 400 | takes no body"})
    void refusalsNameTheProblem(String method, String path, String body, int status, String message) {
        Refused e = catchThrowableOfType(Refused.class,
                () -> ApiRoutes.route(method, path, Map.of(), body == null ? null : json(body)));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.getMessage()).contains(message);
    }

    @Test
    void aQueryFlagIsTrueOrFalseOnly() {
        Refused e = catchThrowableOfType(Refused.class,
                () -> ApiRoutes.route("DELETE", "/v1/networks/n1", Map.of("force", "yes"), null));
        assertThat(e.status()).isEqualTo(400);
        assertThat(e.getMessage()).contains("force must be true or false, not 'yes'");
    }

    @Test
    void theClientsCommandLineIsNulTerminatedUtf8() {
        assertThat(ServeWire.commandLine("--netns\0lab\0ls\0".getBytes())).containsExactly("--netns", "lab", "ls");
        assertThat(ServeWire.commandLine(new byte[0])).isEmpty();
        assertThat(catchThrowableOfType(Refused.class, () -> ServeWire.commandLine("ls".getBytes())).getMessage())
                .contains("must end with a NUL byte");
        assertThat(catchThrowableOfType(Refused.class,
                () -> ServeWire.commandLine(new byte[] {'l', (byte) 0xff, 0})).getMessage()).contains("not UTF-8");
        // Beside ASCII arguments (read without a decoder), one that is not ASCII is still decoded and checked.
        assertThat(ServeWire.commandLine("--owner\0caf\u00e9-1\0".getBytes(StandardCharsets.UTF_8)))
                .containsExactly("--owner", "caf\u00e9-1");
    }

    @Test
    void exitCodesMapToStatuses() {
        assertThat(List.of(0, 1, 2, 3, 4).stream().map(ErrorStatus::of).toList()).containsExactly(200, 500, 400, 409, 503);
    }

    @Test
    void aFailureThatMayPassIs503WithRetryAfterWhileTheCliStillExits1() {
        RetryableException lostReply = new ReplyTimeoutException("publish 8080/tcp", Duration.ofSeconds(5));
        assertThat(ExitCode.of(lostReply)).as("the CLI's exit code, part of its contract").isEqualTo(ExitCode.FAILED);
        assertThat(ErrorStatus.of(lostReply)).isEqualTo(503);
        assertThat(ErrorStatus.retryAfterSeconds(lostReply)).hasValue(1);
        // The other classes keep their exit code's status, and a client is not told to try again.
        List<Throwable> others = List.of(new GatunException("the kernel refused"), new ConflictException("held by web-2"),
                new InvalidInputException("port 70000 is out of range"));
        assertThat(others.stream().map(ErrorStatus::of).toList()).containsExactly(500, 409, 400);
        assertThat(others).allSatisfy(e -> assertThat(ErrorStatus.retryAfterSeconds(e)).isEmpty());
    }
}
