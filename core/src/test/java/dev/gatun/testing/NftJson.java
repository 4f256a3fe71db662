package dev.gatun.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The real nft's JSON listing of a namespace's ruleset, normalised for comparison: without the
 * metainfo record and handles (they count objects ever made), and with set elements sorted
 * (a hash set lists them in no fixed order).
 */
public final class NftJson {

    private static final ObjectMapper JSON = new ObjectMapper();

    private NftJson() {}

    public static JsonNode ruleset(NetworkNamespace ns) {
        try {
            JsonNode root = JSON.readTree(Oracle.in(ns, "nft", "-j", "list", "ruleset"));
            ArrayNode items = (ArrayNode) root.get("nftables");
            ArrayNode kept = JSON.createArrayNode();
            for (JsonNode item : items) {
                if (!item.has("metainfo")) {
                    kept.add(normalise(item));
                }
            }
            return kept;
        } catch (IOException e) {
            throw new AssertionError("nft -j printed something that is not JSON", e);
        }
    }

    private static JsonNode normalise(JsonNode node) {
        if (node instanceof ObjectNode o) {
            o.remove("handle");
            o.remove("expires"); // time left on an element with a timeout: it runs down

            List<String> names = new ArrayList<>();
            o.fieldNames().forEachRemaining(names::add);
            for (String n : names) {
                o.set(n, normalise(o.get(n)));
            }
            if (o.get("elem") instanceof ArrayNode elems) {
                List<JsonNode> sorted = new ArrayList<>();
                elems.forEach(sorted::add);
                sorted.sort(Comparator.comparing(JsonNode::toString));
                ArrayNode a = JSON.createArrayNode();
                sorted.forEach(a::add);
                o.set("elem", a);
            }
            return o;
        }
        if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                a.set(i, normalise(a.get(i)));
            }
        }
        return node;
    }
}
