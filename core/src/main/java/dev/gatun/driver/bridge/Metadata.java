package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Key=value metadata kept in a link's alias (IFLA_IFALIAS), so that the kernel, not a state
 * file, remembers what gatun made: "gatun-network name=n1 v4=10.88.0.0/16 ...". Values are
 * percent-encoded, so any owner string survives.
 */
final class Metadata {

    static final String NETWORK = "gatun-network";
    static final String ENDPOINT = "gatun-endpoint";
    /** The kernel keeps at most 255 bytes of alias. */
    private static final int MAX_BYTES = 255;

    private Metadata() {}

    static String encode(String kind, Map<String, String> values) {
        StringBuilder s = new StringBuilder(kind);
        for (var e : values.entrySet()) {
            if (e.getValue() != null) {
                s.append(' ').append(e.getKey()).append('=')
                        .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
            }
        }
        if (s.toString().getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw new InvalidInputException("the metadata of " + kind + " " + values.get("name")
                    + " does not fit in a link alias (255 bytes); use shorter names or owner ids");
        }
        return s.toString();
    }

    /** The values of an alias of this kind, or null when the alias is not one. */
    static Map<String, String> decode(String kind, String alias) {
        if (alias == null || !alias.startsWith(kind + " ")) {
            return null;
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : alias.substring(kind.length() + 1).split(" ")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                out.put(part.substring(0, eq), URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }
}
