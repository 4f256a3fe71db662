package dev.gatun.cli.json;

import dev.gatun.cli.testing.JsonFuzz;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link JsonTree} reads and writes JSON trees with Jackson's parser and generator alone: the
 * oracle is Jackson's data binding, which read and wrote the netavark plugin's calls before.
 */
class JsonTreePropertiesTest {

    private static final ObjectMapper BINDING = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    /** Netavark's calls as Podman sends them: the fuzzed documents are made from these. */
    private static final List<String> NETAVARK_CALLS = List.of(
            """
            {"name": "web", "id": "%s", "driver": "gatun", "subnets": [{"subnet": "10.89.0.0/24", "gateway": "10.89.0.1"}],
             "ipv6_enabled": false, "internal": false, "dns_enabled": false, "options": {"mtu": "1400"}}"""
                    .formatted("a".repeat(64)),
            """
            {"container_id": "%s", "container_name": "c1", "network": {"name": "web", "driver": "gatun",
             "subnets": [{"subnet": "10.89.0.0/24"}]}, "network_options": {"interface_name": "eth0",
             "static_ips": ["10.89.0.2"]}, "port_mappings": [{"host_ip": "", "container_port": 80, "host_port": 8080,
             "range": 1, "protocol": "tcp"}, {"host_ip": "127.0.0.1", "container_port": 53, "host_port": 5353,
             "range": 3, "protocol": "udp"}]}""".formatted("b".repeat(64)));

    @Property(tries = 500)
    void aDocumentIsReadAndWrittenAsTheDataBindingDoes(@ForAll("documents") String document) throws Exception {
        assertSameAsTheBinding(document);
    }

    @Property(tries = 1000)
    void aDamagedCallIsReadOrRefusedAsTheDataBindingDoes(@ForAll("damagedCalls") String document) throws Exception {
        assertSameAsTheBinding(document);
    }

    @Test
    void numbersKeepTheirKind() throws Exception {
        for (String number : List.of("0", "-0", "2147483647", "2147483648", "-9223372036854775809", "1e309", "-0.0",
                "1.5E-7", "123456789012345678901234567890")) {
            assertSameAsTheBinding("{\"n\": " + number + ", \"l\": [" + number + "]}");
        }
    }

    @Test
    void onlyOneValueIsAccepted() {
        for (String twice : List.of("{} {}", "{\"a\": 1} 2", "[1] x", "{}]")) {
            byte[] in = twice.getBytes(StandardCharsets.UTF_8);
            assertThatThrownBy(() -> JsonTree.read(in)).as(twice).isInstanceOf(JsonProcessingException.class);
            assertThatThrownBy(() -> BINDING.readTree(in)).as(twice).isInstanceOf(JsonProcessingException.class);
        }
    }

    @Test
    void aKeyGivenTwiceKeepsItsLastValue() throws Exception {
        JsonNode n = JsonTree.read("{\"a\": 1, \"b\": 2, \"a\": [3]}".getBytes(StandardCharsets.UTF_8));
        assertThat(n.get("a").get(0).intValue()).isEqualTo(3);
        assertSameAsTheBinding("{\"a\": 1, \"b\": 2, \"a\": [3]}");
    }

    @Test
    void noValueIsNone() throws Exception {
        assertThat(JsonTree.read(" \n\t".getBytes(StandardCharsets.UTF_8))).isNull();
        assertThat(BINDING.readTree(" \n\t".getBytes(StandardCharsets.UTF_8)).isMissingNode()).isTrue();
    }

    private static void assertSameAsTheBinding(String document) throws Exception {
        byte[] in = document.getBytes(StandardCharsets.UTF_8);
        JsonNode expected;
        try {
            expected = BINDING.readTree(in);
        } catch (JsonProcessingException refused) {
            assertThatThrownBy(() -> JsonTree.read(in)).as(document).isInstanceOf(JsonProcessingException.class);
            return;
        }
        JsonNode read = JsonTree.read(in);
        if (expected.isMissingNode()) {
            assertThat(read).as(document).isNull();
            return;
        }
        assertThat(read).as(document).isEqualTo(expected);
        assertThat(read.getClass()).as(document).isEqualTo(expected.getClass());
        assertThat(JsonTree.text(read)).as(document).isEqualTo(BINDING.writeValueAsString(expected));
    }

    @Provide
    Arbitrary<String> documents() {
        return value(3);
    }

    @Provide
    Arbitrary<String> damagedCalls() {
        return JsonFuzz.mutated(NETAVARK_CALLS);
    }

    /** JSON text: scalars of every kind (numbers of every size and form, strings with escapes), nested. */
    private static Arbitrary<String> value(int depth) {
        Arbitrary<String> scalar = Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(8).map(JsonTreePropertiesTest::quoted),
                Arbitraries.integers().map(String::valueOf),
                Arbitraries.longs().map(String::valueOf),
                Arbitraries.bigIntegers().between(new java.math.BigInteger("-1" + "0".repeat(30)),
                        new java.math.BigInteger("1" + "0".repeat(30))).map(String::valueOf),
                Arbitraries.doubles().map(String::valueOf),
                Arbitraries.of("1e3", "-2.5E-3", "0.0", "-0", "1E400"),
                Arbitraries.of("true", "false", "null"));
        if (depth == 0) {
            return scalar;
        }
        Arbitrary<String> array = value(depth - 1).list().ofMaxSize(4).map(l -> "[" + String.join(", ", l) + "]");
        Arbitrary<String> object = Arbitraries.strings().ofMaxLength(3).map(JsonTreePropertiesTest::quoted)
                .flatMap(k -> value(depth - 1).map(v -> k + ": " + v)).list().ofMaxSize(4)
                .map(l -> "{" + String.join(",\n ", l) + "}");
        return Arbitraries.frequencyOf(Tuple.of(3, scalar), Tuple.of(1, array), Tuple.of(1, object));
    }

    /** {@code s} as a JSON string: escapes where JSON needs them, and every other control character as \\u. */
    private static String quoted(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20 || Character.isSurrogate(c)) {
                        b.append("\\u%04x".formatted((int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
