package dev.gatun.cli.cni;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.ErrnoException;
import dev.gatun.Gatun;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.internal.InetText;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * gatun as a CNI plugin: one call (the CNI_* environment and the config on stdin) in, the
 * plugin's stdout and exit code out, run the same in a process of its own and inside
 * {@code gatun serve} for the thin client. Every verb of spec 1.1.0 (and the results of 0.3.0 to
 * 1.0.0); each translates into {@link NetworkDriver} calls, as the Docker plugin does.
 *
 * <p>Main plugin (no prevResult on ADD): addresses from the IPAM plugin, run as {@code bridge}
 * runs it; gatun's network named as the CNI network (made at the first ADD with the IPAM
 * subnet and gateway), a veth into CNI_NETNS, and the ports of
 * {@code runtimeConfig.portMappings}. Chained (a prevResult on ADD, as {@code portmap} is): only
 * the ports, for the prevResult's container addresses. Whatever an attachment makes is owned by
 * {@code CONTAINERID/IFNAME} ({@code CONTAINERID/IFNAME@NETWORK} when chained: those mappings
 * are on no network of gatun's, so the owner says which CNI network GC may collect them for).
 */
public final class CniPlugin {

    /** What the plugin printed and its exit code. */
    public record Outcome(int exitCode, byte[] stdout, byte[] stderr) {}

    /** Lends a driver for the host namespace: a new one (closed after) or the serve's own. */
    @FunctionalInterface
    public interface Drivers {
        <T> T with(Function<NetworkDriver, T> work);
    }

    /** A process of its own: a driver for the namespace it runs in, opened for the call. */
    public static final Drivers IN_PROCESS = new Drivers() {
        @Override
        public <T> T with(Function<NetworkDriver, T> work) {
            try (NetworkDriver d = Gatun.open(NetworkNamespace.current())) {
                return work.apply(d);
            }
        }
    };

    private final CniEnv env;
    private final CniConfig config;
    private final Drivers drivers;
    private final StringBuilder log;

    private CniPlugin(CniEnv env, CniConfig config, Drivers drivers, StringBuilder log) {
        this.env = env;
        this.config = config;
        this.drivers = drivers;
        this.log = log;
    }

    /** Runs one call: {@code environment} (only CNI_* is read) and the config on stdin. */
    public static Outcome run(Map<String, String> environment, byte[] stdin, Drivers drivers) {
        String version = null;
        StringBuilder log = new StringBuilder();
        try {
            CniEnv env = CniEnv.of(environment);
            if (env.command().equals("VERSION")) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("cniVersion", CniVersion.LATEST);
                v.put("supportedVersions", CniVersion.SUPPORTED);
                return ok(v, log);
            }
            CniConfig config = CniConfig.parse(stdin);
            version = config.cniVersion();
            JsonNode result = new CniPlugin(env, config, drivers, log).verb();
            return result == null ? new Outcome(0, new byte[0], bytes(log)) : ok(result, log);
        } catch (RuntimeException e) {
            CniError error = CniError.of(e);
            if (!(e instanceof CniError) && error.code() == CniError.FAILED && !(e instanceof GatunException)) {
                // Unexpected: a bug of ours. Keep the trace for the report.
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                log.append(trace);
            }
            String v = version != null ? version : CniConfig.versionOf(stdin);
            return new Outcome(1, json(error.document(v)), bytes(log));
        }
    }

    private static Outcome ok(Object document, StringBuilder log) {
        return new Outcome(0, json(document), bytes(log));
    }

    private static byte[] bytes(StringBuilder log) {
        return log.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] json(Object document) {
        try {
            return (CniConfig.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(document) + "\n")
                    .getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The owner of what an attachment makes: "CONTAINERID/IFNAME", with "@NETWORK" when chained. */
    static String owner(String containerId, String ifname) {
        return containerId + "/" + ifname;
    }

    private String owner() {
        return owner(env.containerId(), env.ifname());
    }

    private String chainedOwner() {
        return owner() + "@" + config.name();
    }

    /** An owner gatun's CNI plugin made: "ID/IFNAME" (main) or "ID/IFNAME@NETWORK" (chained). */
    private static boolean isCniOwner(String owner) {
        return owner.matches("[A-Za-z0-9][A-Za-z0-9_.\\-]*/[^/:\\s]{1,15}(@[A-Za-z0-9][A-Za-z0-9_.-]{0,63})?");
    }

    private JsonNode verb() {
        return switch (env.command()) {
            case "ADD" -> config.chained() ? addChained() : add();
            case "DEL" -> {
                del();
                yield null;
            }
            case "CHECK" -> {
                check();
                yield null;
            }
            case "GC" -> {
                gc();
                yield null;
            }
            case "STATUS" -> {
                status();
                yield null;
            }
            default -> throw new CniError(CniError.BAD_ENVIRONMENT, "unknown CNI_COMMAND " + env.command());
        };
    }

    // ------------------------------------------------------------------ ADD

    private JsonNode add() {
        if (config.ipamType() == null) {
            throw CniConfig.invalid("gatun as the main plugin needs an ipam section (for example {\"type\": "
                    + "\"host-local\", ...}); chained after another plugin it needs that plugin's prevResult");
        }
        NetworkNamespace container = namespace();
        ObjectNode ipam = Ipam.exec(config.ipamType(), "ADD", env, config.raw());
        if (ipam == null) {
            throw new CniError(CniError.IO_FAILURE, "IPAM plugin " + config.ipamType() + " answered ADD with nothing");
        }
        try {
            List<Address> ips = addresses(ipam, "the result of IPAM plugin " + config.ipamType());
            Address v4 = ips.stream().filter(a -> !a.prefix().isIpv6()).findFirst().orElseThrow(() -> CniConfig.invalid(
                    "IPAM plugin " + config.ipamType() + " gave no IPv4 address; gatun's networks need one"));
            Address v6 = ips.stream().filter(a -> a.prefix().isIpv6()).findFirst().orElse(null);
            ObjectNode result = drivers.with(d -> {
                Network n = network(d, v4, v6);
                // A container id is used once; what an earlier ADD left under it (a DEL that never came) goes.
                if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(owner()))) {
                    d.detachOwner(n.name(), owner());
                }
                Endpoint e = d.attach(EndpointSpec.on(n.name()).container(container).ifname(env.ifname())
                        .ip(v4.prefix().address()).ip6(v6 == null ? null : v6.prefix().address()).owner(owner()).build());
                try {
                    publish(d, n.name(), false, List.of(e.ip()), e.ip6() == null ? List.of() : List.of(e.ip6()));
                } catch (RuntimeException x) {
                    d.detachOwner(n.name(), owner());
                    throw x;
                }
                log("ADD " + owner() + ": " + InetText.of(e.ip()) + " on " + n.name() + " (" + e.hostIfname() + "), "
                        + config.portMappings().size() + " port mapping(s)");
                return result(ipam, n, e);
            });
            return result;
        } catch (RuntimeException x) {
            try {
                Ipam.exec(config.ipamType(), "DEL", env, config.raw());
            } catch (RuntimeException ignored) {
                log("releasing the address after a failed ADD failed too: " + ignored.getMessage());
            }
            throw x;
        }
    }

    private NetworkNamespace namespace() {
        try {
            return NetworkNamespace.at(Path.of(env.netns()));
        } catch (InvalidInputException e) {
            throw new CniError(CniError.BAD_ENVIRONMENT, "CNI_NETNS " + env.netns() + ": " + e.getMessage());
        }
    }

    /** gatun's network of this CNI network: made at the first ADD, from the IPAM result. */
    private Network network(NetworkDriver d, Address v4, Address v6) {
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            Network n = find(d);
            if (n == null) {
                try {
                    n = d.createNetwork(NetworkSpec.named(config.name()).bridge(config.bridge())
                            .subnet4(v4.prefix().network()).gateway4(v4.gateway())
                            .subnet6(v6 == null ? null : v6.prefix().network()).gateway6(v6 == null ? null : v6.gateway())
                            .mtu(config.mtu()).icc(config.icc()).internal(config.internal()).masquerade(config.ipMasq())
                            .build());
                    log("created network " + n.name() + " (bridge " + n.bridge() + ", " + n.subnets() + ")");
                } catch (ConflictException | ErrnoException e) {
                    // Another ADD (another process) may be making it right now: read again.
                    last = e;
                    sleep(25L * (attempt + 1));
                    continue;
                }
            }
            if (n.subnets().stream().noneMatch(p -> p.contains(v4.prefix().address()))) {
                throw CniConfig.invalid("network " + n.name() + " exists with subnets " + n.subnets() + ", but IPAM gave "
                        + v4.prefix() + "; remove it (gatun net rm " + n.name() + ") or change the ipam section");
            }
            if (config.bridge() != null && !config.bridge().equals(n.bridge())) {
                throw CniConfig.invalid("network " + n.name() + " exists with bridge " + n.bridge() + ", not "
                        + config.bridge());
            }
            return n;
        }
        throw last;
    }

    private Network find(NetworkDriver d) {
        return d.networks().stream().filter(n -> n.name().equals(config.name())).findFirst().orElse(null);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private JsonNode addChained() {
        List<InetAddress> v4 = new ArrayList<>();
        List<InetAddress> v6 = new ArrayList<>();
        for (Address a : containerAddresses(config.prevResult())) {
            (a.prefix().isIpv6() ? v6 : v4).add(a.prefix().address());
        }
        if (!config.portMappings().isEmpty() && v4.isEmpty() && v6.isEmpty()) {
            throw CniConfig.invalid("prevResult has no container address to publish ports to");
        }
        if (!config.portMappings().isEmpty()) {
            drivers.with(d -> {
                publish(d, config.name(), true, v4, v6);
                return null;
            });
            log("ADD " + chainedOwner() + ": " + config.portMappings().size() + " port mapping(s) to " + v4 + v6);
        }
        // A chained plugin that adds no interface passes the result on.
        return converted(config.prevResult());
    }

    /** Publishes the config's port mappings to each container address of the mapping's family. */
    private void publish(NetworkDriver d, String network, boolean outside, List<InetAddress> v4, List<InetAddress> v6) {
        for (InetAddress ip : concat(v4, v6)) {
            List<PortSpec> ports = specs(ip);
            if (ports.isEmpty()) {
                continue;
            }
            if (outside) {
                d.publishOutside(network, ip, ports, chainedOwner());
            } else {
                // Not asking the host's sockets: the runtime holds the ports itself before ADD
                // (rootful Podman binds every published port through conmon), as portmap leaves it.
                d.publish(network, ip, ports, owner(), HostPortCheck.SKIP);
            }
        }
    }

    private List<PortSpec> specs(InetAddress containerIp) {
        boolean four = containerIp instanceof Inet4Address;
        List<PortSpec> out = new ArrayList<>();
        for (CniConfig.PortMapping m : config.portMappings()) {
            if (m.hostIp() == null || (m.hostIp() instanceof Inet4Address) == four) {
                out.add(new PortSpec(m.hostIp(), m.hostPort(), m.hostPort(), m.containerPort(), m.containerPort(),
                        m.protocol()));
            }
        }
        return out;
    }

    private static <T> List<T> concat(List<T> a, List<T> b) {
        List<T> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    // ------------------------------------------------------------------ results

    record Address(Prefix prefix, InetAddress gateway, JsonNode node) {}

    /** The addresses of a result ({@code ips}, in any version's shape). */
    static List<Address> addresses(JsonNode result, String what) {
        List<Address> out = new ArrayList<>();
        JsonNode ips = result.path("ips");
        if (!ips.isMissingNode() && !ips.isArray()) {
            throw CniConfig.invalid(what + ": ips " + ips + " is not an array");
        }
        for (JsonNode ip : ips) {
            String address = ip.path("address").asText("");
            try {
                Prefix p = Prefix.parse(address);
                String gw = ip.path("gateway").asText("");
                out.add(new Address(p, gw.isEmpty() ? null : Prefix.address(gw), ip));
            } catch (InvalidInputException e) {
                throw CniConfig.invalid(what + ": address '" + address + "' is not an address with a prefix length");
            }
        }
        return out;
    }

    /** The addresses of a prevResult that are the container's: on an interface with a sandbox, or on none named. */
    private static List<Address> containerAddresses(JsonNode prev) {
        JsonNode interfaces = prev.path("interfaces");
        List<Address> out = new ArrayList<>();
        for (Address a : addresses(prev, "prevResult")) {
            JsonNode idx = a.node().get("interface");
            if (idx == null || !idx.isIntegralNumber() || !interfaces.has(idx.asInt())
                    || !interfaces.get(idx.asInt()).path("sandbox").asText("").isEmpty()) {
                out.add(a);
            }
        }
        return out;
    }

    /** The main plugin's result: the bridge, the host end, the container end, the IPAM addresses on it. */
    private ObjectNode result(ObjectNode ipam, Network n, Endpoint e) {
        ObjectNode r = CniConfig.JSON.createObjectNode();
        ArrayNode interfaces = r.putArray("interfaces");
        interfaces.addObject().put("name", n.bridge()).put("mac", n.mac().toString());
        interfaces.addObject().put("name", e.hostIfname());
        interfaces.addObject().put("name", e.ifname()).put("mac", e.mac().toString()).put("sandbox", env.netns());
        ArrayNode ips = r.putArray("ips");
        for (JsonNode ip : ipam.path("ips")) {
            ObjectNode copy = ((ObjectNode) ip).deepCopy();
            copy.put("interface", 2);
            ips.add(copy);
        }
        ArrayNode routes = r.putArray("routes");
        ipam.path("routes").forEach(routes::add);
        if (config.isDefaultGateway() && !config.internal()) {
            for (int i = 0; i < n.gateways().size(); i++) {
                InetAddress gw = n.gateways().get(i);
                String any = gw instanceof Inet4Address ? "0.0.0.0/0" : "::/0";
                boolean present = false;
                for (JsonNode route : routes) {
                    present |= any.equals(route.path("dst").asText());
                }
                if (!present) {
                    routes.addObject().put("dst", any).put("gw", InetText.of(gw));
                }
            }
        }
        if (ipam.has("dns")) {
            r.set("dns", ipam.get("dns"));
        }
        return converted(r);
    }

    /** A result in the config's version: 0.3.x and 0.4.0 give each address its IP version, 1.x do not. */
    private ObjectNode converted(ObjectNode result) {
        ObjectNode r = CniConfig.JSON.createObjectNode();
        r.put("cniVersion", config.cniVersion());
        result.fields().forEachRemaining(f -> {
            if (!f.getKey().equals("cniVersion")) {
                r.set(f.getKey(), f.getValue().deepCopy());
            }
        });
        for (JsonNode ip : r.path("ips")) {
            ObjectNode o = (ObjectNode) ip;
            if (CniVersion.ipsHaveVersion(config.cniVersion())) {
                o.put("version", o.path("address").asText().contains(":") ? "6" : "4");
            } else {
                o.remove("version");
            }
        }
        return r;
    }

    // ------------------------------------------------------------------ DEL

    private void del() {
        drivers.with(d -> {
            int removed = 0;
            Network n = find(d);
            if (n != null) {
                if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(owner()))) {
                    d.detachOwner(n.name(), owner());
                    removed++;
                }
                for (InetAddress ip : containerIps(d.published(n.name()), owner())) {
                    removed += d.unpublish(n.name(), ip, List.of(), owner()).size();
                }
            }
            for (InetAddress ip : containerIps(d.publishedOutside(), chainedOwner())) {
                removed += d.unpublishOutside(config.name(), ip, List.of(), chainedOwner()).size();
            }
            log("DEL " + owner() + ": " + (removed == 0 ? "nothing left" : "removed"));
            return null;
        });
        if (config.ipamType() != null) {
            Ipam.exec(config.ipamType(), "DEL", env, config.raw());
        }
    }

    private static Set<InetAddress> containerIps(List<PortMapping> mappings, String owner) {
        Set<InetAddress> out = new LinkedHashSet<>();
        for (PortMapping m : mappings) {
            if (m.owner().equals(owner)) {
                out.add(m.containerIp());
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ CHECK

    private void check() {
        if (!CniVersion.atLeast(config.cniVersion(), "0.4.0")) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "CHECK needs cniVersion 0.4.0 or later, not "
                    + config.cniVersion());
        }
        if (config.prevResult() == null) {
            throw CniConfig.invalid("CHECK needs the prevResult of the ADD it checks");
        }
        boolean main = config.ipamType() != null;
        if (main) {
            Ipam.exec(config.ipamType(), "CHECK", env, config.raw());
        }
        List<Address> addresses = containerAddresses(config.prevResult());
        List<String> missing = drivers.with(d -> {
            List<String> out = new ArrayList<>();
            List<InetAddress> v4 = new ArrayList<>();
            List<InetAddress> v6 = new ArrayList<>();
            addresses.forEach(a -> (a.prefix().isIpv6() ? v6 : v4).add(a.prefix().address()));
            List<PortMapping> published;
            String who;
            if (main) {
                who = owner();
                Network n = find(d);
                if (n == null) {
                    out.add("network " + config.name() + " (its bridge and firewall entries)");
                    return out;
                }
                Endpoint e = d.endpoints(n.name()).stream().filter(x -> x.owner().equals(who)).findFirst().orElse(null);
                if (e == null) {
                    out.add("the veth of " + who + " on bridge " + n.bridge());
                } else {
                    for (InetAddress ip : concat(v4, v6)) {
                        if (!ip.equals(e.ip()) && !ip.equals(e.ip6())) {
                            out.add("address " + InetText.of(ip) + " on " + e.ifname() + " (the veth has "
                                    + InetText.of(e.ip()) + ")");
                        }
                    }
                    out.addAll(d.verify(e, namespace()));
                }
                published = d.published(n.name());
            } else {
                who = chainedOwner();
                published = d.publishedOutside();
            }
            for (InetAddress ip : concat(v4, v6)) {
                for (PortSpec p : specs(ip)) {
                    boolean present = published.stream().anyMatch(m -> m.owner().equals(who)
                            && m.protocol() == p.protocol() && m.hostPort() == p.hostStart()
                            && Objects.equals(m.hostIp(), p.hostIp()) && m.containerIp().equals(ip)
                            && m.containerPort() == p.containerStart());
                    if (!present) {
                        out.add("port mapping " + new PortMapping(null, p.protocol(), p.hostIp(), p.hostStart(), ip,
                                p.containerStart(), who).describe());
                    }
                }
            }
            return out;
        });
        if (!missing.isEmpty()) {
            throw new CniError(CniError.MISSING, "attachment " + owner() + " of network " + config.name() + " is missing: "
                    + String.join("; ", missing));
        }
    }

    // ------------------------------------------------------------------ GC and STATUS

    private void gc() {
        if (!CniVersion.atLeast(config.cniVersion(), "1.1.0")) {
            throw new CniError(CniError.INCOMPATIBLE_VERSION, "GC needs cniVersion 1.1.0 or later, not "
                    + config.cniVersion());
        }
        Set<String> valid = config.validAttachments();
        if (valid == null) {
            throw CniConfig.invalid("GC needs cni.dev/valid-attachments (the attachments to keep)");
        }
        String chained = "@" + config.name();
        drivers.with(d -> {
            List<String> gone = new ArrayList<>();
            Network n = find(d);
            if (n != null) {
                Set<String> owners = new LinkedHashSet<>();
                d.endpoints(n.name()).forEach(e -> owners.add(e.owner()));
                for (String owner : owners) {
                    if (isCniOwner(owner) && !owner.contains("@") && !valid.contains(owner)) {
                        d.detachOwner(n.name(), owner);
                        gone.add(owner);
                    }
                }
                for (PortMapping m : d.published(n.name())) {
                    if (isCniOwner(m.owner()) && !m.owner().contains("@") && !valid.contains(m.owner())) {
                        d.unpublish(n.name(), m.containerIp(), List.of(), m.owner());
                        gone.add(m.owner());
                    }
                }
            }
            for (PortMapping m : d.publishedOutside()) {
                String owner = m.owner();
                if (isCniOwner(owner) && owner.endsWith(chained)
                        && !valid.contains(owner.substring(0, owner.length() - chained.length()))) {
                    d.unpublishOutside(config.name(), m.containerIp(), List.of(), owner);
                    gone.add(owner);
                }
            }
            log("GC " + config.name() + ": " + (gone.isEmpty() ? "nothing stale" : "removed " + new LinkedHashSet<>(gone)));
            return null;
        });
        ipamOptional("GC");
    }

    private void status() {
        try {
            drivers.with(NetworkDriver::networks);
        } catch (RuntimeException e) {
            throw new CniError(CniError.NOT_AVAILABLE, "gatun cannot program networks here: " + CniError.of(e).getMessage());
        }
        ipamOptional("STATUS");
    }

    /**
     * GC and STATUS of the IPAM plugin, when it speaks spec 1.1.0 (as libcni, gatun asks it with
     * VERSION first); plugins made before 1.1.0 know neither verb: then skipped, and said.
     */
    private void ipamOptional(String verb) {
        if (config.ipamType() == null) {
            return;
        }
        ObjectNode version = Ipam.exec(config.ipamType(), "VERSION", env,
                ("{\"cniVersion\": \"" + config.cniVersion() + "\"}").getBytes(StandardCharsets.UTF_8));
        boolean speaks = false;
        if (version != null) {
            for (JsonNode v : version.path("supportedVersions")) {
                speaks |= v.asText().equals("1.1.0");
            }
        }
        if (!speaks) {
            log("IPAM plugin " + config.ipamType() + " does not speak spec 1.1.0; its " + verb + " is skipped");
            return;
        }
        Ipam.exec(config.ipamType(), verb, env, config.raw());
    }

    private void log(String line) {
        log.append("gatun: ").append(line).append('\n');
    }
}
