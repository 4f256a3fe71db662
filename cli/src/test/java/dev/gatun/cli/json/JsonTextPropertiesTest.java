package dev.gatun.cli.json;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Json#text} writes plain documents with Jackson's generator alone: the oracle is
 * Jackson's data binding, which wrote every document before, on the same trees.
 */
class JsonTextPropertiesTest {

    private static final ObjectMapper BINDING = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Property(tries = 500)
    void aPlainDocumentIsWrittenAsTheDataBindingWritesIt(@ForAll("documents") Object document) throws Exception {
        assertThat(Json.text(document)).isEqualTo(BINDING.writeValueAsString(document));
    }

    @Test
    void everyDocumentShapeOfTheCliIsWrittenAsBefore() throws Exception {
        List<Object> documents = List.of(
                Json.error(3, "no such network \"n\" (\u00e9, \t, \u0001)"),
                Json.mappings(List.of()),
                Json.deleted("n1"),
                Json.ruleset("table inet gatun {\n}\n"),
                Map.of("netns", "x"),
                List.of(),
                Map.of());
        for (Object d : documents) {
            assertThat(Json.text(d)).isEqualTo(BINDING.writeValueAsString(d));
        }
    }

    @Test
    void otherTypesGoThroughTheDataBinding() throws Exception {
        Object withAnAddress = Map.of("ip", InetAddress.getLoopbackAddress());
        Object withASet = Map.of("ports", Set.of(8080));
        assertThat(Json.text(withAnAddress)).isEqualTo(BINDING.writeValueAsString(withAnAddress));
        assertThat(Json.text(withASet)).isEqualTo(BINDING.writeValueAsString(withASet));
    }

    @Provide
    Arbitrary<Object> documents() {
        return value(3);
    }

    private static Arbitrary<Object> value(int depth) {
        Arbitrary<Object> scalar = Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(12).map(s -> (Object) s),
                Arbitraries.strings().all().ofMaxLength(6).map(s -> (Object) s),
                Arbitraries.integers().map(i -> (Object) i),
                Arbitraries.longs().map(l -> (Object) l),
                Arbitraries.doubles().map(d -> (Object) d),
                Arbitraries.of(true, false).map(b -> (Object) b),
                Arbitraries.just(null));
        if (depth == 0) {
            return scalar;
        }
        Arbitrary<Object> list = value(depth - 1).list().ofMaxSize(4).map(l -> (Object) new ArrayList<>(l));
        Arbitrary<Object> map = Arbitraries.maps(Arbitraries.strings().ofMaxLength(8), value(depth - 1)).ofMaxSize(4)
                .map(m -> (Object) new LinkedHashMap<>(m));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, scalar), net.jqwik.api.Tuple.of(1, list),
                net.jqwik.api.Tuple.of(1, map));
    }
}
