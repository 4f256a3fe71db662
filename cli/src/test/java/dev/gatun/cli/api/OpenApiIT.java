package dev.gatun.cli.api;

import dev.gatun.cli.wire.ServeWire;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document against a real validator and a real serve: a tour of requests makes the
 * serve answer every status the document gives each operation, and every status it answered is
 * in the document for that operation.
 */
@ExtendWith(FreshNamespaces.class)
class OpenApiIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Where ci/setup installs the validator (npm's @seriousme/openapi-schema-validator). */
    private static final Path VALIDATOR = Path.of(System.getenv().getOrDefault("GATUN_OPENAPI_VALIDATOR",
            "/var/cache/gatun/openapi-validator/node_modules/.bin/validate-api"));
    /** Documented and not made here, with the reason: a serve in a test namespace can always work. */
    private static final List<String> NOT_TOURED = List.of("GET /v1/doctor 503");

    private static Path source() {
        return GatunCli.ROOT.resolve("cli/src/main/resources" + OpenApiDocument.RESOURCE);
    }

    @Test
    void theDocumentIsValidOpenApi31() throws Exception {
        if (!Files.isExecutable(VALIDATOR)) {
            // Skipped on a machine without ci/setup's tools; with CI=true its absence fails, as every missing tool does.
            Assumptions.assumeTrue("true".equals(System.getenv("CI")), "the validator " + VALIDATOR + " is not installed");
            assertThat(Files.isExecutable(VALIDATOR)).as("the validator " + VALIDATOR + " (ci/setup installs it)").isTrue();
        }
        Oracle.Result r = Oracle.run(List.of(VALIDATOR.toString(), source().toString()));
        assertThat(r.exitCode()).as("validate-api: %s %s", r.stdout(), r.stderr()).isZero();
        assertThat(JSON.readTree(r.stdout()).path("valid").asBoolean()).isTrue();
        // The control: the same validator refuses a document that lost its info.version.
        Path broken = Files.createTempFile("openapi-broken", ".json");
        try {
            Files.writeString(broken, Files.readString(source()).replaceFirst("\"version\": \"1\",", ""));
            assertThat(Oracle.run(List.of(VALIDATOR.toString(), broken.toString())).exitCode()).isNotZero();
        } finally {
            Files.delete(broken);
        }
    }

    @Test
    void everyDocumentedStatusIsAnsweredAndEveryAnswerIsDocumented(NetworkNamespace host, NetworkNamespace container)
            throws Exception {
        Path socket = Path.of("/run/gatun/netns-" + host.inode() + ".sock");
        TreeSet<String> answered = new TreeSet<>();
        Map<String, String> said = new java.util.TreeMap<>();
        String c = container.name();
        byte[] big = new byte[ServeWire.MAX_BODY + 1];
        try (GatunServe serve = GatunServe.start(host.name())) {
            Tour t = new Tour(socket, answered, said);
            // The document is served as it is in the sources.
            assertThat(t.send("GET", "/v1/openapi.json", new byte[0]).body()).isEqualTo(Files.readAllBytes(source()));
            for (String op : OpenApiDocumentTest.documentedOperations(OpenApiDocumentTest.document())) {
                String[] mp = op.split(" ");
                t.send(mp[0], mp[1].replace("{network}", "n1").replace("{netns}", c), big); // 413 everywhere
            }
            t.send("POST", "/v1/cli", bytes("ls\0"));
            t.send("POST", "/v1/cli", bytes("ls"));
            t.send("POST", "/v1/cli", bytes("demo\0"));
            t.send("POST", "/v1/cni", bytes("CNI_COMMAND=VERSION\0\0{\"cniVersion\":\"1.0.0\"}"));
            t.send("POST", "/v1/cni", bytes("CNI_COMMAND"));
            t.send("POST", "/v1/netavark", bytes("info\0\0"));
            t.send("POST", "/v1/netavark", bytes("info"));
            t.send("GET", "/v1/events?until=now", new byte[0]);
            t.send("GET", "/v1/events?since=yesterday", new byte[0]);
            t.send("GET", "/v1/networks", new byte[0]);
            t.send("GET", "/v1/networks", bytes("{}"));
            t.send("POST", "/v1/networks", bytes("{\"name\":\"n1\",\"subnets\":[\"10.88.0.0/24\"]}"));
            t.send("POST", "/v1/networks", bytes("{\"name\":\"n2\",\"bogus\":1}"));
            t.send("POST", "/v1/networks", bytes("{\"name\":\"n1\",\"subnets\":[\"10.99.0.0/24\"]}"));
            t.send("POST", "/v1/networks/n1/endpoints", bytes("{\"containerNetns\":\"" + c + "\",\"ip\":\"10.88.0.5\"}"));
            t.send("POST", "/v1/networks/n1/endpoints", bytes("{}"));
            t.send("POST", "/v1/networks/nope/endpoints", bytes("{\"containerNetns\":\"" + c + "\"}"));
            t.send("POST", "/v1/networks/n1/endpoints", bytes("{\"containerNetns\":\"" + c + "\",\"ip\":\"10.88.0.6\"}"));
            t.send("POST", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"8080:80\"],\"owner\":\"o1\"}"));
            t.send("POST", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"x\"]}"));
            t.send("POST", "/v1/networks/nope/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"8081:80\"]}"));
            t.send("POST", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.7\",\"ports\":[\"8080:80\"],\"owner\":\"o2\"}"));
            t.send("DELETE", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"8080:80\"],\"owner\":\"o2\"}"));
            t.send("DELETE", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"8080:80\"],\"owner\":\"o1\"}"));
            t.send("DELETE", "/v1/networks/n1/ports", bytes("{\"bogus\":1}"));
            t.send("DELETE", "/v1/networks/nope/ports", bytes("{\"containerIp\":\"10.88.0.5\"}"));
            t.send("POST", "/v1/networks/n1/ports", bytes("{\"containerIp\":\"10.88.0.5\",\"ports\":[\"9090:80\"],\"owner\":\"o1\"}"));
            t.send("GET", "/v1/ports", new byte[0]);
            t.send("GET", "/v1/ports", bytes("{}"));
            t.send("GET", "/v1/ports?network=nope", new byte[0]);
            t.send("GET", "/v1/ruleset", new byte[0]);
            t.send("GET", "/v1/ruleset", bytes("{}"));
            t.send("GET", "/v1/doctor", new byte[0]);
            t.send("GET", "/v1/doctor", bytes("{}"));
            t.send("DELETE", "/v1/networks/n1", new byte[0]);
            t.send("DELETE", "/v1/networks/n1/endpoints/" + c, bytes("{}"));
            t.send("DELETE", "/v1/networks/n1/endpoints/" + c, new byte[0]);
            t.send("DELETE", "/v1/networks/n1/endpoints/" + c, new byte[0]);
            t.send("DELETE", "/v1/networks/n1?force=maybe", new byte[0]);
            t.send("DELETE", "/v1/networks/nope", new byte[0]);
            t.send("DELETE", "/v1/networks/n1?force=true", new byte[0]);

            // Outside the operations: a path not there, a method not listed; the error document both times.
            Reply none = t.raw("GET", "/v1/nothing", new byte[0]);
            assertThat(none.status()).isEqualTo(404);
            assertThat(JSON.readTree(none.body()).path("error").path("message").asText()).contains("/v1/nothing");
            Reply wrong = t.raw("PUT", "/v1/networks", new byte[0]);
            assertThat(wrong.status()).isEqualTo(405);
            assertThat(JSON.readTree(wrong.body()).path("error").path("message").asText()).contains("allowed: GET, POST");
            assertThat(serve.isAlive()).isTrue();
        }
        TreeSet<String> documented = documentedStatuses(OpenApiDocumentTest.document());
        TreeSet<String> undocumented = new TreeSet<>(answered);
        undocumented.removeAll(documented);
        TreeSet<String> unanswered = new TreeSet<>(documented);
        unanswered.removeAll(answered);
        unanswered.removeAll(NOT_TOURED);
        assertThat(undocumented).as("answered, not in openapi.json (what was said: %s)", said).isEmpty();
        assertThat(unanswered).as("in openapi.json, never answered on the tour").isEmpty();
    }

    /** "METHOD /path STATUS" for every response of every operation. */
    private static TreeSet<String> documentedStatuses(JsonNode doc) {
        TreeSet<String> out = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.path("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            p.getValue().fields().forEachRemaining(op -> op.getValue().path("responses").fieldNames()
                    .forEachRemaining(status -> out.add(op.getKey().toUpperCase(java.util.Locale.ROOT) + " " + p.getKey()
                            + " " + status)));
        }
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    record Reply(int status, byte[] body) { }

    /** Sends requests on the serve's socket and notes "METHOD /template STATUS" of each. */
    private record Tour(Path socket, TreeSet<String> answered, Map<String, String> said) {
        Reply send(String method, String pathAndQuery, byte[] body) throws Exception {
            Reply r = raw(method, pathAndQuery, body);
            String path = pathAndQuery.split("\\?")[0];
            String key = method + " " + ApiPaths.template(path) + " " + r.status();
            answered.add(key);
            said.putIfAbsent(key, new String(r.body(), StandardCharsets.UTF_8).strip());
            return r;
        }

        Reply raw(String method, String pathAndQuery, byte[] body) throws Exception {
            try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
                String head = method + " " + pathAndQuery + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                        + "Content-Length: " + body.length + "\r\n\r\n";
                ch.write(ByteBuffer.wrap(head.getBytes(StandardCharsets.UTF_8)));
                ByteBuffer b = ByteBuffer.wrap(body);
                try {
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                } catch (java.io.IOException e) {
                    // refused before the whole body was read (413): its answer is there to read
                }
                ByteArrayOutputStream all = new ByteArrayOutputStream();
                try {
                    Channels.newInputStream(ch).transferTo(all);
                } catch (java.io.IOException e) {
                    // a refusal may close before the whole body was read: the answer is there
                }
                String text = all.toString(StandardCharsets.ISO_8859_1);
                int status = Integer.parseInt(text.substring(9, 12));
                int start = text.indexOf("\r\n\r\n") + 4;
                byte[] content = java.util.Arrays.copyOfRange(all.toByteArray(), start, all.size());
                if (text.substring(0, start).toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked")) {
                    content = unchunk(content);
                }
                return new Reply(status, content);
            }
        }

        private static byte[] unchunk(byte[] chunked) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int i = 0;
            while (i < chunked.length) {
                int eol = indexOf(chunked, i);
                int size = Integer.parseInt(new String(chunked, i, eol - i, StandardCharsets.ISO_8859_1).split(";")[0].strip(), 16);
                if (size == 0) {
                    break;
                }
                out.write(chunked, eol + 2, size);
                i = eol + 2 + size + 2;
            }
            return out.toByteArray();
        }

        private static int indexOf(byte[] b, int from) {
            for (int i = from; i < b.length - 1; i++) {
                if (b[i] == '\r' && b[i + 1] == '\n') {
                    return i;
                }
            }
            return b.length;
        }
    }
}
