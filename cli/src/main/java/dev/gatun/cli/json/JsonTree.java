package dev.gatun.cli.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Jackson's tree of a JSON document, read and written with its streaming parser and generator
 * alone. An engine's calls (the netavark plugin's) are read as a tree; setting up the data
 * binding to do so held some 2.7 MiB more in a serve for good (bench/runs/2026-12-06-a-serve-s-memory-and-the.md, "A serve's memory
 * and the netavark plugin's JSON"). Reads the trees the binding's {@code readTree} reads
 * (numbers as int, long, big integer or double nodes; a key given twice keeps its last value) and
 * writes them as its {@code writeValueAsString} does: the binding is the oracle of the tests.
 */
public final class JsonTree {

    private static final JsonFactory FACTORY = new JsonFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonTree() {}

    /** A new, empty object. */
    public static ObjectNode object() {
        return NODES.objectNode();
    }

    /**
     * The one JSON value of {@code in}, or null when it holds none (only white space); a
     * malformed document, or more after the value, is a {@link JsonParseException}.
     */
    public static JsonNode read(byte[] in) throws IOException {
        try (JsonParser p = FACTORY.createParser(in)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                return null;
            }
            JsonNode value = value(p, first);
            JsonToken after = p.nextToken();
            if (after != null) {
                throw new JsonParseException(p, "more after the document's one value");
            }
            return value;
        }
    }

    private static JsonNode value(JsonParser p, JsonToken t) throws IOException {
        return switch (t) {
            case START_OBJECT -> {
                ObjectNode o = NODES.objectNode();
                for (JsonToken k = p.nextToken(); k != JsonToken.END_OBJECT; k = p.nextToken()) {
                    String name = p.currentName();
                    o.set(name, value(p, p.nextToken()));
                }
                yield o;
            }
            case START_ARRAY -> {
                ArrayNode a = NODES.arrayNode();
                for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
                    a.add(value(p, e));
                }
                yield a;
            }
            case VALUE_STRING -> NODES.textNode(p.getText());
            case VALUE_NUMBER_INT -> switch (p.getNumberType()) {
                case INT -> NODES.numberNode(p.getIntValue());
                case LONG -> NODES.numberNode(p.getLongValue());
                default -> NODES.numberNode(p.getBigIntegerValue());
            };
            case VALUE_NUMBER_FLOAT -> NODES.numberNode(p.getDoubleValue());
            case VALUE_TRUE -> NODES.booleanNode(true);
            case VALUE_FALSE -> NODES.booleanNode(false);
            case VALUE_NULL -> NODES.nullNode();
            default -> throw new JsonParseException(p, "unexpected " + t.asString());
        };
    }

    /** {@code tree} as compact JSON text. */
    public static String text(JsonNode tree) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            write(g, tree);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write JSON", e);
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, JsonNode n) throws IOException {
        switch (n.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (Map.Entry<String, JsonNode> e : n.properties()) {
                    g.writeFieldName(e.getKey());
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (JsonNode e : n) {
                    write(g, e);
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(n.textValue());
            case NUMBER -> {
                switch (n.numberType()) {
                    case INT -> g.writeNumber(n.intValue());
                    case LONG -> g.writeNumber(n.longValue());
                    case BIG_INTEGER -> g.writeNumber(n.bigIntegerValue());
                    case FLOAT -> g.writeNumber(n.floatValue());
                    case DOUBLE -> g.writeNumber(n.doubleValue());
                    case BIG_DECIMAL -> g.writeNumber(n.decimalValue());
                }
            }
            case BOOLEAN -> g.writeBoolean(n.booleanValue());
            case NULL -> g.writeNull();
            default -> throw new IllegalArgumentException("a JSON tree holds no " + n.getNodeType() + " node");
        }
    }
}
