package dev.gatun.cli.api;

import dev.gatun.cli.wire.Refused;
import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.json.Json;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.cli.service.Attach;
import dev.gatun.cli.service.CreateNetwork;
import dev.gatun.cli.service.DeleteNetwork;
import dev.gatun.cli.service.Detach;
import dev.gatun.cli.service.DoctorReport;
import dev.gatun.cli.service.GatunService;
import dev.gatun.cli.service.ListPorts;
import dev.gatun.cli.service.Publish;
import dev.gatun.cli.service.ReplacePorts;
import dev.gatun.cli.service.Unpublish;
import dev.gatun.driver.HostPortCheck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The local API's paths, each a typed request of {@link GatunService} made from the path, the
 * query and the JSON body, and answered with the CLI's JSON document of its result: the API is
 * the CLI's JSON contract over HTTP, so both validate, answer and fail alike, but no value is
 * ever read as a command line.
 *
 * <pre>
 * GET    /v1/networks                              net ls
 * POST   /v1/networks                              net create   {name, subnets[], bridge, gateway, mac, mtu, icc, internal}
 * DELETE /v1/networks/NET[?force=true]             net rm
 * POST   /v1/networks/NET/endpoints                attach       {containerNetns, ip, ip6, ifname, mac, owner}
 * DELETE /v1/networks/NET/endpoints/NETNS[?ifname=] detach
 * POST   /v1/networks/NET/ports                    publish      {containerIp, ports[], owner, checkHostPorts,
 *                                                                replace, keepUdpFlows}
 * DELETE /v1/networks/NET/ports                    unpublish    {containerIp, ports[], owner, drain, timeoutSeconds}
 * GET    /v1/ports[?network=NET]                   ls
 * GET    /v1/ruleset                               ruleset
 * GET    /v1/doctor                                doctor
 * </pre>
 */
final class ApiRoutes {

    /** What the request asks for cannot be served: the HTTP status and one sentence. */
    /** A request's answer: its HTTP status and the JSON document of its body. */
    record Answer(int status, Object document) {
        static Answer ok(Object document) {
            return new Answer(200, document);
        }
    }

    /** A typed request, made from a path and a body, waiting to be run. */
    @FunctionalInterface
    interface Route {
        Answer run(GatunService service);

        /** Whether it may wait long (a drain, for connections to end): answered on a thread of its own. */
        default boolean waits() {
            return false;
        }

        /** {@code route}, marked as one that waits. */
        static Route waiting(Route route) {
            return new Route() {
                @Override
                public Answer run(GatunService service) {
                    return route.run(service);
                }

                @Override
                public boolean waits() {
                    return true;
                }
            };
        }
    }

    /** How long an unpublish that drains waits when the request names no timeout: as the CLI's --timeout. */
    static final int DEFAULT_DRAIN_SECONDS = 60;

    private ApiRoutes() {}

    /**
     * The route of a request. {@link Refused} for what HTTP says (no such path, a method not
     * allowed, a body of the wrong shape); a value the request cannot take (a port spec, an
     * address) fails as the CLI's option would, with its exception.
     */
    static Route route(String method, String path, Map<String, String> query, JsonNode body) {
        String template = ApiPaths.check(method, path);
        String[] p = path.replaceAll("/+$", "").split("/", -1);
        String what = method + " " + path;
        switch (method + " " + template) {
            case "GET /v1/networks" -> {
                noBody(body, what);
                return s -> Answer.ok(s.networks().stream().map(Json::network).toList());
            }
            case "POST /v1/networks" -> {
                Fields f = new Fields(body, what, "name", "subnets", "bridge", "gateway", "mac", "mtu", "icc", "internal",
                        "counters");
                CreateNetwork r = CreateNetwork.of(named(f.required("name"), what), f.strings("subnets"), f.string("bridge"),
                        f.string("gateway"), f.string("mac"), f.integer("mtu"), !Boolean.FALSE.equals(f.bool("icc")),
                        Boolean.TRUE.equals(f.bool("internal")), Boolean.TRUE.equals(f.bool("counters")));
                return s -> Answer.ok(Json.network(s.createNetwork(r)));
            }
            case "DELETE /v1/networks/{network}" -> {
                noBody(body, what);
                DeleteNetwork r = new DeleteNetwork(named(p[3], what), bool(query, "force", what));
                return s -> {
                    s.deleteNetwork(r);
                    return Answer.ok(Json.deleted(r.name()));
                };
            }
            case "POST /v1/networks/{network}/endpoints" -> {
                Fields f = new Fields(body, what, "containerNetns", "ip", "ip6", "ifname", "mac", "owner");
                Attach r = Attach.of(named(p[3], what), named(f.required("containerNetns"), what), f.string("ip"),
                        f.string("ip6"), f.string("ifname"), f.string("mac"), f.string("owner"));
                return s -> Answer.ok(Json.endpoint(s.attach(r)));
            }
            case "DELETE /v1/networks/{network}/endpoints/{netns}" -> {
                noBody(body, what);
                Detach r = Detach.of(named(p[3], what), named(p[5], what), query.get("ifname"));
                return s -> {
                    s.detach(r);
                    return Answer.ok(Json.detached(r.containerName(), r.network()));
                };
            }
            case "POST /v1/networks/{network}/ports", "DELETE /v1/networks/{network}/ports" -> {
                boolean publish = method.equals("POST");
                Fields f = publish ? new Fields(body, what, "containerIp", "ports", "owner", "checkHostPorts", "replace",
                        "keepUdpFlows") : new Fields(body, what, "containerIp", "ports", "owner", "drain", "timeoutSeconds");
                List<String> ports = f.strings("ports");
                if (publish && ports.isEmpty()) {
                    throw new Refused(400, what + ": \"ports\" must list at least one port, such as \"8080:80\"");
                }
                String network = named(p[3], what);
                String containerIp = named(f.required("containerIp"), what);
                if (publish) {
                    Publish r = Publish.of(network, containerIp, ports, f.string("owner"),
                            Boolean.FALSE.equals(f.bool("checkHostPorts")) ? HostPortCheck.SKIP : HostPortCheck.CHECK);
                    boolean keepUdpFlows = Boolean.TRUE.equals(f.bool("keepUdpFlows"));
                    if (Boolean.TRUE.equals(f.bool("replace"))) {
                        ReplacePorts replace = new ReplacePorts(r, keepUdpFlows);
                        return s -> Answer.ok(Json.replacement(s.replace(replace)));
                    }
                    if (keepUdpFlows) {
                        throw new Refused(400, what + ": \"keepUdpFlows\" is an option of \"replace\": true");
                    }
                    return s -> Answer.ok(Json.mappings(s.publish(r)));
                }
                Unpublish r = Unpublish.of(network, containerIp, ports, f.string("owner"));
                Integer timeout = f.integer("timeoutSeconds");
                if (Boolean.TRUE.equals(f.bool("drain"))) {
                    if (timeout != null && timeout <= 0) {
                        throw new Refused(400, what + ": \"timeoutSeconds\" must be 1 or more, not " + timeout);
                    }
                    Duration limit = Duration.ofSeconds(timeout == null ? DEFAULT_DRAIN_SECONDS : timeout);
                    return Route.waiting(s -> Answer.ok(Json.drained(s.unpublishAndDrain(r, limit))));
                }
                if (timeout != null) {
                    throw new Refused(400, what + ": \"timeoutSeconds\" is an option of \"drain\": true");
                }
                return s -> Answer.ok(Json.mappings(s.unpublish(r)));
            }
            case "GET /v1/ports" -> {
                noBody(body, what);
                String network = query.get("network");
                ListPorts r = network == null ? ListPorts.ALL : new ListPorts(named(network, what));
                if (bool(query, "stats", what)) {
                    return s -> Answer.ok(Json.traffic(s.traffic(r)));
                }
                return s -> Answer.ok(Json.mappings(s.ports(r)));
            }
            case "GET /v1/ruleset" -> {
                noBody(body, what);
                return s -> Answer.ok(Json.ruleset(s.ruleset()));
            }
            case "GET /v1/doctor" -> {
                noBody(body, what);
                return s -> {
                    DoctorReport report = s.doctor();
                    // As the command's exit code: 4 when gatun cannot work here.
                    return new Answer(ErrorStatus.of(report.usable() ? ExitCode.OK : ExitCode.ENVIRONMENT), Json.doctor(report));
                };
            }
            // The local API's own paths (the C client's, events, the document) never come here.
            default -> throw new Refused(404, "no such path: " + path);
        }
    }

    /** A name from the path or the body: never empty. */
    private static String named(String value, String what) {
        if (value.isEmpty()) {
            throw new Refused(400, what + ": an empty name");
        }
        return value;
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
