package dev.gatun.cli.api;

import dev.gatun.cli.wire.Refused;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every path of the local API and the methods each takes: the one table the server dispatches
 * by (a path not here is a 404, a method not listed a 405) and that the OpenAPI document,
 * openapi.json beside this class, must describe exactly (a test compares both ways).
 */
public final class ApiPaths {

    /** Path templates ({name} is one segment) and their methods, in the document's order. */
    public static final Map<String, List<String>> METHODS = table();

    private static Map<String, List<String>> table() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("/v1/cli", List.of("POST"));
        m.put("/v1/cni", List.of("POST"));
        m.put("/v1/netavark", List.of("POST"));
        m.put("/v1/events", List.of("GET"));
        m.put("/v1/openapi.json", List.of("GET"));
        m.put("/v1/networks", List.of("GET", "POST"));
        m.put("/v1/networks/{network}", List.of("DELETE"));
        m.put("/v1/networks/{network}/endpoints", List.of("POST"));
        m.put("/v1/networks/{network}/endpoints/{netns}", List.of("DELETE"));
        m.put("/v1/networks/{network}/ports", List.of("POST", "DELETE"));
        m.put("/v1/ports", List.of("GET"));
        m.put("/v1/ruleset", List.of("GET"));
        m.put("/v1/doctor", List.of("GET"));
        return java.util.Collections.unmodifiableMap(m);
    }

    private ApiPaths() {
    }

    /** The template {@code path} matches (a trailing slash aside), or null. */
    public static String template(String path) {
        String[] p = path.replaceAll("/+$", "").split("/", -1);
        for (String t : METHODS.keySet()) {
            String[] q = t.split("/", -1);
            if (q.length != p.length) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i < q.length && match; i++) {
                // An empty name matches too: the route refuses it as an empty name (400), not as no path.
                match = q[i].startsWith("{") || q[i].equals(p[i]);
            }
            if (match) {
                return t;
            }
        }
        return null;
    }

    /** Checks {@code method} on {@code path}: its template, or Refused 404 or 405 as HTTP says. */
    static String check(String method, String path) {
        String t = template(path);
        if (t == null) {
            throw new Refused(404, "no such path: " + path + (path.startsWith("/v1/") ? ""
                    : " (paths start with /v1/)"));
        }
        List<String> allowed = METHODS.get(t);
        if (!allowed.contains(method)) {
            throw new Refused(405, method + " is not allowed on " + path + " (allowed: "
                    + String.join(", ", allowed) + ")");
        }
        return t;
    }
}
