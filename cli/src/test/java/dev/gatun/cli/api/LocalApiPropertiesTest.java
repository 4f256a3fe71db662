package dev.gatun.cli.api;

import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeWire;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.testing.JsonFuzz;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.service.GatunService;
import dev.gatun.testing.StandInDriver;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The local API's JSON entry point fed malformed, truncated and oversized documents
 * (JsonFuzz) on every path that takes a body: each is a typed request, run here over a
 * stand-in driver, or refused with a documented status and a sentence (by HTTP's rules or as a
 * value the CLI's option would refuse); never another exception. What reaches the kernel is
 * LocalApiIT's.
 */
class LocalApiPropertiesTest {

    private record Route(String method, String path, String body) {}

    private static final List<Route> ROUTES = List.of(
            new Route("POST", "/v1/networks", """
                    {"name": "n1", "subnets": ["10.88.0.0/16", "fd00::/64"], "bridge": "br-n1", "gateway": "10.88.0.1",
                     "mac": "02:42:0a:58:00:01", "mtu": 1400, "icc": false, "internal": true}"""),
            new Route("POST", "/v1/networks/n1/endpoints", """
                    {"containerNetns": "c1", "ip": "10.88.0.2", "ip6": "fd00::2", "ifname": "eth1", "mac": "02:42:0a:58:00:02", "owner": "web-1"}"""),
            new Route("POST", "/v1/networks/n1/ports", """
                    {"containerIp": "10.88.0.2", "ports": ["8080:80", "127.0.0.1:5353:53/udp"], "owner": "web-1", "checkHostPorts": false}"""),
            new Route("DELETE", "/v1/networks/n1/ports", """
                    {"containerIp": "10.88.0.2", "ports": ["8080:80"], "owner": "web-1"}"""),
            new Route("GET", "/v1/networks", ""),
            new Route("DELETE", "/v1/networks/n1", ""));

    @Provide
    Arbitrary<Route> requests() {
        return Arbitraries.of(ROUTES).flatMap(r -> JsonFuzz.mutated(List.of(r.body()))
                .map(body -> new Route(r.method(), r.path(), body)));
    }

    /** A driver that answers every call a route makes with nothing, as an empty host would. */
    private static final GatunService EMPTY_HOST = new GatunService(() -> {
        throw new GatunException("no namespace in this test");
    }, Drivers.of(StandInDriver.answering(Map.of(
            "createNetwork", ApiRoutesTest::made, "deleteNetwork", args -> null, "networks", args -> List.of(),
            "attach", ApiRoutesTest::made, "publish", args -> List.of(), "unpublish", args -> List.of()))));

    @Property(tries = 1000)
    void aBodyIsARequestOrARefusalWithItsStatus(@ForAll("requests") Route r) {
        byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
        String what = r.method() + " " + r.path();
        try {
            JsonNode json = body.length == 0 ? null : LocalApi.parse(body, what);
            ApiRoutes.Answer a = ApiRoutes.route(r.method(), r.path(), Map.of(), json).run(EMPTY_HOST);
            assertThat(a.status()).isEqualTo(200);
        } catch (Refused e) {
            assertThat(e.status()).as(e.getMessage()).isIn(400, 404, 405, 413);
            assertThat(e.getMessage()).isNotBlank();
        } catch (InvalidInputException refusedAsUsage) {
            // A value the request cannot take (a port spec, an address, a namespace): 400 or 404, named.
            assertThat(ErrorStatus.of(refusedAsUsage)).isIn(400, 404);
            assertThat(refusedAsUsage.getMessage()).isNotBlank();
        }
    }

    /** The thin client's command lines, NUL-terminated arguments: any bytes, cut anywhere. */
    @Provide
    Arbitrary<byte[]> commandLines() {
        Arbitrary<byte[]> valid = Arbitraries.of(List.of("publish", "n1", "10.88.0.2", "-p", "8080:80"), List.of("ls"),
                List.of("net", "ls")).map(words -> (String.join("\0", words) + "\0").getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> cut = Combinators.combine(valid, Arbitraries.integers().between(0, 40))
                .as((b, n) -> Arrays.copyOf(b, Math.min(b.length, n)));
        Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(2_000);
        Arbitrary<byte[]> many = Arbitraries.integers().between(500, 700).map(n -> "x\0".repeat(n).getBytes(StandardCharsets.UTF_8));
        return Arbitraries.oneOf(valid, cut, random, many);
    }

    @Property(tries = 500)
    void aForwardedCommandLineIsArgumentsOrA400(@ForAll("commandLines") byte[] body) {
        try {
            assertThat(ServeWire.commandLine(body)).hasSizeLessThanOrEqualTo(513);
        } catch (Refused e) {
            assertThat(e.status()).isEqualTo(400);
            assertThat(e.getMessage()).isNotBlank();
        }
    }
}
