package dev.gatun.cli.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.RetryableException;
import dev.gatun.cli.ExitCode;
import dev.gatun.cli.GatunCommand;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.driver.ConflictException;
import dev.gatun.netlink.ReplyTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The local API's paths as command lines, checked by picocli's own parser; no root needed. */
class ApiRoutesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** What picocli makes of the words: the subcommand's options and positionals. */
    private static CommandLine.ParseResult parse(List<String> words) {
        List<String> all = new ArrayList<>(List.of("--json"));
        all.addAll(words);
        String[] args = all.toArray(String[]::new);
        CommandLine.ParseResult top = GatunCommand.commandLine(args).parseArgs(args);
        CommandLine.ParseResult sub = top.subcommand();
        return sub.subcommand() != null ? sub.subcommand() : sub;
    }

    @Test
    void publishPassesEveryValueAsAValueNeverAsAnOption() {
        List<String> words = ApiRoutes.args("POST", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"--force\", \"ports\": [\"8080:80\", \"53/udp\"], \"owner\": \"--json\"}"));
        CommandLine.ParseResult r = parse(words);
        assertThat(r.commandSpec().name()).isEqualTo("publish");
        assertThat(r.matchedOptionValue("-p", List.of())).containsExactly("8080:80", "53/udp");
        assertThat(r.<String>matchedOptionValue("--owner", null)).isEqualTo("--json");
        assertThat(r.matchedPositionals()).extracting(p -> p.getValue().toString()).containsExactly("n1", "--force");
    }

    @Test
    void checkHostPortsFalseSkipsTheCheckAndOnlyFalseDoes() {
        CommandLine.ParseResult skip = parse(ApiRoutes.args("POST", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"checkHostPorts\": false}")));
        assertThat(skip.hasMatchedOption("--skip-host-port-check")).isTrue();
        for (String body : List.of("{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"checkHostPorts\": true}",
                "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"]}")) {
            assertThat(parse(ApiRoutes.args("POST", "/v1/networks/n1/ports", Map.of(), json(body)))
                    .hasMatchedOption("--skip-host-port-check")).as(body).isFalse();
        }
    }

    @Test
    void aValueThatLooksLikeAnOptionIsAValueOrRefusedButNeverObeyed() {
        CommandLine.ParseResult r = parse(ApiRoutes.args("DELETE", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"10.88.0.2\", \"ports\": [\"--force\"]}")));
        assertThat(r.commandSpec().name()).isEqualTo("unpublish");
        assertThat(r.matchedOptionValue("-p", List.of())).containsExactly("--force");
        // picocli refuses a value that names one of the command's own options (exit 2 through the API).
        List<String> words = ApiRoutes.args("DELETE", "/v1/networks/n1/ports", Map.of(),
                json("{\"containerIp\": \"10.88.0.2\", \"ports\": [\"--owner\"]}"));
        assertThat(catchThrowableOfType(CommandLine.MissingParameterException.class, () -> parse(words)).getMessage())
                .contains("Expected parameter for option '-p' but found '--owner'");
    }

    @Test
    void networkCreateTakesEveryOption() {
        CommandLine.ParseResult r = parse(ApiRoutes.args("POST", "/v1/networks", Map.of(), json(
                "{\"name\": \"web\", \"subnets\": [\"10.88.0.0/16\", \"fd00:88::/64\"], \"bridge\": \"br-web\","
                        + " \"gateway\": \"10.88.0.254\", \"mac\": \"02:00:00:00:00:01\", \"mtu\": 1400, \"icc\": false,"
                        + " \"internal\": true}")));
        assertThat(r.commandSpec().name()).isEqualTo("create");
        assertThat(r.matchedOptionValue("--subnet", List.of())).containsExactly("10.88.0.0/16", "fd00:88::/64");
        assertThat(r.<Integer>matchedOptionValue("--mtu", null)).isEqualTo(1400);
        assertThat(r.hasMatchedOption("--no-icc")).isTrue();
        assertThat(r.hasMatchedOption("--internal")).isTrue();
        assertThat(r.<String>matchedOptionValue("--bridge", null)).isEqualTo("br-web");
        assertThat(r.matchedPositionals()).extracting(p -> p.getValue().toString()).containsExactly("web");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
            "GET    | /v1/networks                     |                      | net ls --",
            "DELETE | /v1/networks/n1                  | force=true           | net rm --force -- n1",
            "DELETE | /v1/networks/n1/endpoints/c1     | ifname=eth1          | detach --ifname=eth1 -- n1 c1",
            "GET    | /v1/ports                        | network=n1           | ls -- n1",
            "GET    | /v1/ports/                       |                      | ls --",
            "GET    | /v1/ruleset                      |                      | ruleset --",
            "GET    | /v1/doctor                       |                      | doctor --"})
    void pathsWithoutABody(String method, String path, String query, String expected) {
        Map<String, String> q = query == null ? Map.of() : Map.of(query.split("=")[0], query.split("=")[1]);
        assertThat(String.join(" ", ApiRoutes.args(method, path, q, null))).isEqualTo(expected);
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
            "POST   | /v1/networks/n1/ports | {\"containerIp\": \"10.88.0.2\"}         | 400 | must list at least one port",
            "POST   | /v1/networks/n1/ports | {\"ports\": [\"80\"]}                    | 400 | \"containerIp\" is required",
            "GET    | /v1/ruleset           | {}                                       | 400 | takes no body"})
    void refusalsNameTheProblem(String method, String path, String body, int status, String message) {
        ApiRoutes.Refused e = catchThrowableOfType(ApiRoutes.Refused.class,
                () -> ApiRoutes.args(method, path, Map.of(), body == null ? null : json(body)));
        assertThat(e).as("refused").isNotNull();
        assertThat(e.status).isEqualTo(status);
        assertThat(e.getMessage()).contains(message);
    }

    @Test
    void aQueryFlagIsTrueOrFalseOnly() {
        ApiRoutes.Refused e = catchThrowableOfType(ApiRoutes.Refused.class,
                () -> ApiRoutes.args("DELETE", "/v1/networks/n1", Map.of("force", "yes"), null));
        assertThat(e.status).isEqualTo(400);
        assertThat(e.getMessage()).contains("force must be true or false, not 'yes'");
    }

    @Test
    void theClientsCommandLineIsNulTerminatedUtf8() {
        assertThat(LocalApi.commandLine("--netns\0lab\0ls\0".getBytes())).containsExactly("--netns", "lab", "ls");
        assertThat(LocalApi.commandLine(new byte[0])).isEmpty();
        assertThat(catchThrowableOfType(ApiRoutes.Refused.class, () -> LocalApi.commandLine("ls".getBytes())).getMessage())
                .contains("must end with a NUL byte");
        assertThat(catchThrowableOfType(ApiRoutes.Refused.class,
                () -> LocalApi.commandLine(new byte[] {'l', (byte) 0xff, 0})).getMessage()).contains("not UTF-8");
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
