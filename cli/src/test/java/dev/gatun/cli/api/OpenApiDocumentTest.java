package dev.gatun.cli.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The OpenAPI document names exactly the paths and methods the server dispatches by (ApiPaths), both ways. */
class OpenApiDocumentTest {

    static JsonNode document() throws Exception {
        return new ObjectMapper().readTree(OpenApiDocument.bytes());
    }

    /** "METHOD /path" of every operation in the document. */
    static TreeSet<String> documentedOperations(JsonNode doc) {
        TreeSet<String> ops = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = doc.path("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> p = paths.next();
            for (Iterator<String> methods = p.getValue().fieldNames(); methods.hasNext(); ) {
                String m = methods.next();
                if (List.of("get", "post", "put", "delete", "patch", "head", "options").contains(m)) {
                    ops.add(m.toUpperCase(Locale.ROOT) + " " + p.getKey());
                }
            }
        }
        return ops;
    }

    @Test
    void everyPathAndMethodTheServerTakesIsDocumentedAndNothingElse() throws Exception {
        TreeSet<String> served = new TreeSet<>();
        ApiPaths.METHODS.forEach((path, methods) -> methods.forEach(m -> served.add(m + " " + path)));
        TreeSet<String> documented = documentedOperations(document());
        TreeSet<String> undocumented = new TreeSet<>(served);
        undocumented.removeAll(documented);
        TreeSet<String> notServed = new TreeSet<>(documented);
        notServed.removeAll(served);
        assertThat(undocumented).as("served but not in openapi.json").isEmpty();
        assertThat(notServed).as("in openapi.json but not served").isEmpty();
    }

    @Test
    void operationIdsAreUniqueAndEveryOperationDocumentsItsStatuses() throws Exception {
        JsonNode doc = document();
        List<String> ids = new ArrayList<>();
        doc.path("paths").forEach(p -> p.fields().forEachRemaining(op -> {
            if (op.getValue().has("responses")) {
                ids.add(op.getValue().path("operationId").asText());
                assertThat(op.getValue().path("responses").size()).isPositive();
            }
        }));
        assertThat(ids).doesNotHaveDuplicates().doesNotContain("");
    }

    @Test
    void pathsMatchTheirTemplatesAndNothingElse() {
        assertThat(ApiPaths.template("/v1/networks/n1/ports")).isEqualTo("/v1/networks/{network}/ports");
        assertThat(ApiPaths.template("/v1/networks/n1/ports/")).isEqualTo("/v1/networks/{network}/ports");
        assertThat(ApiPaths.template("/v1/networks/n1/endpoints/c1")).isEqualTo("/v1/networks/{network}/endpoints/{netns}");
        assertThat(ApiPaths.template("/v1/networks")).isEqualTo("/v1/networks");
        assertThat(ApiPaths.template("/v1/nets")).isNull();
        assertThat(ApiPaths.template("/v2/networks")).isNull();
        assertThat(ApiPaths.template("/v1/networks/n1/ports/extra")).isNull();
    }
}
