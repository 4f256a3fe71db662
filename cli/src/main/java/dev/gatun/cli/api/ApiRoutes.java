package dev.gatun.cli.api;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The local API's paths, each the command line it stands for: the API is the CLI's JSON
 * contract over HTTP, so both validate, answer and fail alike. Values from the path, the query
 * and the body become {@code --option=value} words and positionals after {@code --}, so no
 * value can be read as an option.
 *
 * <pre>
 * GET    /v1/networks                              net ls
 * POST   /v1/networks                              net create   {name, subnets[], bridge, gateway, mac, mtu, icc, internal}
 * DELETE /v1/networks/NET[?force=true]             net rm
 * POST   /v1/networks/NET/endpoints                attach       {containerNetns, ip, ip6, ifname, mac, owner}
 * DELETE /v1/networks/NET/endpoints/NETNS[?ifname=] detach
 * POST   /v1/networks/NET/ports                    publish      {containerIp, ports[], owner, checkHostPorts}
 * DELETE /v1/networks/NET/ports                    unpublish    {containerIp, ports[], owner}
 * GET    /v1/ports[?network=NET]                   ls
 * GET    /v1/ruleset                               ruleset
 * GET    /v1/doctor                                doctor
 * </pre>
 */
final class ApiRoutes {

    /** What the request asks for cannot be served: the HTTP status and one sentence. */
    static final class Refused extends RuntimeException {
        final int status;

        Refused(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    private ApiRoutes() {}

    /** The gatun command line (after the global options) for a request. */
    static List<String> args(String method, String path, Map<String, String> query, JsonNode body) {
        String[] p = path.replaceAll("/+$", "").split("/");
        if (p.length < 3 || !p[0].isEmpty() || !p[1].equals("v1")) {
            throw new Refused(404, "no such path: " + path + " (paths start with /v1/)");
        }
        String what = method + " " + path;
        Words w = new Words(what);
        switch (p.length == 3 ? p[2] : p.length == 4 ? p[2] + "/*" : p.length == 5 ? p[2] + "/*/" + p[4]
                : p.length == 6 ? p[2] + "/*/" + p[4] + "/*" : "") {
            case "networks" -> {
                if (method.equals("GET")) {
                    noBody(body, what);
                    w.command("net", "ls");
                } else if (method.equals("POST")) {
                    Fields f = new Fields(body, what, "name", "subnets", "bridge", "gateway", "mac", "mtu", "icc", "internal");
                    w.command("net", "create");
                    for (String s : f.strings("subnets")) {
                        w.option("--subnet", s);
                    }
                    w.option("--bridge", f.string("bridge"));
                    w.option("--gateway", f.string("gateway"));
                    w.option("--mac", f.string("mac"));
                    w.option("--mtu", f.integer("mtu"));
                    w.flag("--no-icc", Boolean.FALSE.equals(f.bool("icc")));
                    w.flag("--internal", Boolean.TRUE.equals(f.bool("internal")));
                    w.positional(f.required("name"));
                } else {
                    throw notAllowed(method, path, "GET, POST");
                }
            }
            case "networks/*" -> {
                allow(method, path, "DELETE");
                noBody(body, what);
                w.command("net", "rm");
                w.flag("--force", bool(query, "force", what));
                w.positional(p[3]);
            }
            case "networks/*/endpoints" -> {
                allow(method, path, "POST");
                Fields f = new Fields(body, what, "containerNetns", "ip", "ip6", "ifname", "mac", "owner");
                w.command("attach");
                w.option("--ip", f.string("ip"));
                w.option("--ip6", f.string("ip6"));
                w.option("--ifname", f.string("ifname"));
                w.option("--mac", f.string("mac"));
                w.option("--owner", f.string("owner"));
                w.positional(p[3]);
                w.positional(f.required("containerNetns"));
            }
            case "networks/*/endpoints/*" -> {
                allow(method, path, "DELETE");
                noBody(body, what);
                w.command("detach");
                w.option("--ifname", query.get("ifname"));
                w.positional(p[3]);
                w.positional(p[5]);
            }
            case "networks/*/ports" -> {
                boolean publish = method.equals("POST");
                if (!publish && !method.equals("DELETE")) {
                    throw notAllowed(method, path, "POST, DELETE");
                }
                Fields f = publish ? new Fields(body, what, "containerIp", "ports", "owner", "checkHostPorts")
                        : new Fields(body, what, "containerIp", "ports", "owner");
                List<String> ports = f.strings("ports");
                if (publish && ports.isEmpty()) {
                    throw new Refused(400, what + ": \"ports\" must list at least one port, such as \"8080:80\"");
                }
                w.command(publish ? "publish" : "unpublish");
                for (String s : ports) {
                    w.option("-p", s);
                }
                w.option("--owner", f.string("owner"));
                if (publish) {
                    w.flag("--skip-host-port-check", Boolean.FALSE.equals(f.bool("checkHostPorts")));
                }
                w.positional(p[3]);
                w.positional(f.required("containerIp"));
            }
            case "ports" -> {
                allow(method, path, "GET");
                noBody(body, what);
                w.command("ls");
                if (query.get("network") != null) {
                    w.positional(query.get("network"));
                }
            }
            case "ruleset", "doctor" -> {
                allow(method, path, "GET");
                noBody(body, what);
                w.command(p[2]);
            }
            default -> throw new Refused(404, "no such path: " + path);
        }
        return w.words();
    }

    private static void allow(String method, String path, String allowed) {
        if (!method.equals(allowed)) {
            throw notAllowed(method, path, allowed);
        }
    }

    private static Refused notAllowed(String method, String path, String allowed) {
        return new Refused(405, method + " is not allowed on " + path + " (allowed: " + allowed + ")");
    }

    private static void noBody(JsonNode body, String what) {
        if (body != null) {
            throw new Refused(400, what + " takes no body");
        }
    }

    private static boolean bool(Map<String, String> query, String name, String what) {
        String v = query.get(name);
        if (v == null || v.equals("false")) {
            return false;
        }
        if (v.equals("true")) {
            return true;
        }
        throw new Refused(400, what + ": query parameter " + name + " must be true or false, not '" + v + "'");
    }

    /** The command line being built: subcommand words, options, then positionals after "--". */
    private static final class Words {
        private final List<String> command = new ArrayList<>();
        private final List<String> options = new ArrayList<>();
        private final List<String> positionals = new ArrayList<>();
        private final String what;

        Words(String what) {
            this.what = what;
        }

        void command(String... words) {
            command.addAll(List.of(words));
        }

        void option(String name, Object value) {
            if (value != null) {
                options.add(name + "=" + value);
            }
        }

        void flag(String name, boolean set) {
            if (set) {
                options.add(name);
            }
        }

        void positional(String value) {
            if (value.isEmpty()) {
                throw new Refused(400, what + ": an empty name");
            }
            positionals.add(value);
        }

        List<String> words() {
            List<String> out = new ArrayList<>(command);
            out.addAll(options);
            out.add("--");
            out.addAll(positionals);
            return out;
        }
    }

    /** A JSON object body with the fields a path takes: others are refused by name, as are wrong types. */
    private static final class Fields {
        private final Map<String, JsonNode> values = new LinkedHashMap<>();
        private final String what;

        Fields(JsonNode body, String what, String... allowed) {
            this.what = what;
            if (body == null || !body.isObject()) {
                throw new Refused(400, what + " needs a JSON object body with " + String.join(", ", allowed));
            }
            List<String> known = List.of(allowed);
            for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!known.contains(e.getKey())) {
                    throw new Refused(400, what + ": unknown field \"" + e.getKey() + "\" (known: " + String.join(", ", allowed) + ")");
                }
                if (!e.getValue().isNull()) {
                    values.put(e.getKey(), e.getValue());
                }
            }
        }

        String string(String name) {
            JsonNode v = values.get(name);
            if (v != null && !v.isTextual()) {
                throw new Refused(400, what + ": \"" + name + "\" must be a string, not " + v);
            }
            return v == null ? null : v.asText();
        }

        String required(String name) {
            String v = string(name);
            if (v == null) {
                throw new Refused(400, what + ": \"" + name + "\" is required");
            }
            return v;
        }

        Integer integer(String name) {
            JsonNode v = values.get(name);
            if (v != null && !v.isInt()) {
                throw new Refused(400, what + ": \"" + name + "\" must be a whole number, not " + v);
            }
            return v == null ? null : v.asInt();
        }

        Boolean bool(String name) {
            JsonNode v = values.get(name);
            if (v != null && !v.isBoolean()) {
                throw new Refused(400, what + ": \"" + name + "\" must be true or false, not " + v);
            }
            return v == null ? null : v.asBoolean();
        }

        List<String> strings(String name) {
            JsonNode v = values.get(name);
            if (v == null) {
                return List.of();
            }
            List<String> out = new ArrayList<>();
            if (v.isArray()) {
                for (JsonNode e : v) {
                    if (!e.isTextual()) {
                        throw new Refused(400, what + ": \"" + name + "\" must be an array of strings, not " + v);
                    }
                    out.add(e.asText());
                }
                return out;
            }
            throw new Refused(400, what + ": \"" + name + "\" must be an array of strings, not " + v);
        }
    }
}
