package dev.gatun.cli.testing;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Malformed, truncated and oversized JSON documents for the engine adapters' entry points,
 * made from the valid requests each adapter is sent: cut at any point, a character changed,
 * a value replaced by one of another type, strings and arrays grown large, nested deep.
 */
public final class JsonFuzz {

    /** Values of every JSON type, and a few that are not JSON at all. */
    private static final List<String> VALUES = List.of("null", "true", "false", "0", "-1", "65536", "1e309",
            "-0.5", "\"\"", "\"x\"", "\"--json\"", "\"8080:80\"", "\"10.88.0.2\"", "\"::1\"", "[]", "{}", "[null]",
            "[{}]", "{\"a\": 1}", "\"\\u0000\"", "\"\\ud800\"", "NaN", "'x'", "[1,]", "{\"a\"}", "\u00ff");

    private JsonFuzz() {}

    /** Each of {@code seeds}, mutated one to three times. */
    public static Arbitrary<String> mutated(List<String> seeds) {
        return Arbitraries.of(seeds).flatMap(seed -> Arbitraries.randomValue(random -> {
            String doc = seed;
            int times = 1 + random.nextInt(3);
            for (int i = 0; i < times; i++) {
                doc = mutateOnce(doc, random);
            }
            return doc;
        }));
    }

    private static String mutateOnce(String doc, Random random) {
        int at = doc.isEmpty() ? 0 : random.nextInt(doc.length() + 1);
        return switch (random.nextInt(8)) {
            case 0 -> doc.substring(0, at); // truncated
            case 1 -> doc.isEmpty() || at == doc.length() ? doc
                    : doc.substring(0, at) + (char) random.nextInt(128) + doc.substring(at + 1); // a character changed
            case 2 -> replaceValue(doc, VALUES.get(random.nextInt(VALUES.size())), random); // another type
            case 3 -> replaceValue(doc, "\"" + "x".repeat(random.nextInt(20_000)) + "\"", random); // a long string
            case 4 -> replaceValue(doc, "[" + "\"8080:80\",".repeat(random.nextInt(2_000)) + "\"1\"]", random); // a long list
            case 5 -> replaceValue(doc, "[".repeat(1 + random.nextInt(3_000)) + "]".repeat(random.nextInt(3_000)), random);
            case 6 -> doc.substring(0, at) + VALUES.get(random.nextInt(VALUES.size())) + doc.substring(at); // inserted
            default -> doc.replaceFirst("\"([A-Za-z.]+)\"\\s*:", "\"$1\": 1, \"$1\":"); // a key twice
        };
    }

    /** Replaces the value after one of the document's keys with {@code value}. */
    private static String replaceValue(String doc, String value, Random random) {
        List<Integer> colons = new ArrayList<>();
        for (int i = doc.indexOf(':'); i >= 0; i = doc.indexOf(':', i + 1)) {
            colons.add(i);
        }
        if (colons.isEmpty()) {
            return value;
        }
        int colon = colons.get(random.nextInt(colons.size()));
        int end = colon + 1;
        int depth = 0;
        boolean inString = false;
        while (end < doc.length()) {
            char c = doc.charAt(end);
            if (inString) {
                inString = c != '"' || doc.charAt(end - 1) == '\\';
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (depth == 0) {
                    break;
                }
                depth--;
            } else if (c == ',' && depth == 0) {
                break;
            }
            end++;
        }
        return doc.substring(0, colon + 1) + " " + value + doc.substring(end);
    }
}
