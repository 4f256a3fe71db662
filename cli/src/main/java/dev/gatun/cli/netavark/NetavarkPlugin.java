package dev.gatun.cli.netavark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.ErrnoException;
import dev.gatun.GatunException;
import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.Rollback;
import dev.gatun.cli.service.Failure;
import dev.gatun.cli.json.JsonTree;
import dev.gatun.cli.service.Version;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.ContainerSetup;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * gatun as a netavark plugin (containers/netavark's plugin-API.md): Podman 5 hands a network of
 * driver {@code gatun} to it, as {@code gatun VERB [NETNS]} with JSON on stdin. One call in, what
 * it printed and its exit code out, the same in a process of its own and inside {@code gatun
 * serve} for the thin client. {@code create} checks and completes the network, {@code setup}
 * makes gatun's network at its first container and attaches the container with its ports in,
 * {@code teardown} undoes it (also when the namespace is gone, and again), removing gatun's
 * network with its last container as netavark's own bridge driver does. Every failure is
 * netavark's error document, {@code {"error": "..."}}, on stdout with exit code 1, and what the
 * call did before it failed on stderr.
 *
 * <p>DNS: netavark runs aardvark-dns only for its own bridge driver, so a plugin network cannot
 * resolve container names; {@code create} refuses {@code dns_enabled} rather than let Podman
 * promise it.
 */
public final class NetavarkPlugin {

    /** The plugin API version netavark speaks. */
    static final String API_VERSION = "1.0.0";

    /**
     * Rootful Podman holds a container's published ports itself (through conmon) while it runs:
     * those sockets are the engine's reservation, any other holder a conflict.
     */
    static final HostPortCheck PODMAN_HOLDS = HostPortCheck.exceptHeldBy("conmon", "podman");

    /** What the plugin printed and its exit code. */
    public record Outcome(int exitCode, byte[] stdout, byte[] stderr) {}

    private final Drivers drivers;
    private final StringBuilder log = new StringBuilder();

    private NetavarkPlugin(Drivers drivers) {
        this.drivers = drivers;
    }

    /** Runs one call: {@code args} as netavark gives them after the program's name, {@code stdin} its JSON. */
    public static Outcome run(List<String> args, byte[] stdin, Drivers drivers) {
        NetavarkPlugin plugin = new NetavarkPlugin(drivers);
        String verb = args.isEmpty() ? null : args.get(0);
        try {
            JsonNode out = plugin.verb(verb, args, stdin);
            // Quiet when it worked: netavark passes the plugin's stderr to Podman's, as its own bridge driver is quiet.
            return new Outcome(0, out == null ? new byte[0] : json(out), new byte[0]);
        } catch (RuntimeException e) {
            if (!(e instanceof GatunException)) {
                // Unexpected: a bug of ours. Keep the trace for the report.
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                plugin.log.append(trace);
            }
            String what = verb == null ? "gatun" : "gatun " + verb;
            ObjectNode error = JsonTree.object().put("error", what + ": " + Failure.sentence(e));
            return new Outcome(1, json(error), plugin.bytes());
        }
    }

    private JsonNode verb(String verb, List<String> args, byte[] stdin) {
        if (verb == null) {
            throw new InvalidInputException("no subcommand given (netavark runs create, setup NETNS, teardown NETNS "
                    + "or info)");
        }
        return switch (verb) {
            case "info" -> info();
            case "create" -> create(parse(stdin));
            case "setup" -> setup(netns(args), NetavarkSetup.parse(parse(stdin), true));
            case "teardown" -> {
                teardown(netns(args), NetavarkSetup.parse(parse(stdin), false));
                yield null;
            }
            default -> throw new InvalidInputException("unknown subcommand '" + verb + "' (netavark runs create, "
                    + "setup NETNS, teardown NETNS or info)");
        };
    }

    private static JsonNode info() {
        return JsonTree.object().put("version", Version.text()).put("api_version", API_VERSION)
                .put("description", "gatun: bridge networks and published ports over netlink, one nftables "
                        + "transaction per change");
    }

    private JsonNode create(JsonNode network) {
        NetavarkNetwork n = NetavarkNetwork.parse(network);
        if (n.raw().path("dns_enabled").asBoolean(false)) {
            throw new InvalidInputException("a gatun network cannot resolve container names (netavark runs aardvark-dns "
                    + "only for its own bridge driver); create it with --disable-dns");
        }
        List<Network> existing = drivers.with(NetworkDriver::networks);
        List<Network> others = existing.stream().filter(x -> !x.name().equals(n.spec().name())).toList();
        return n.completed(NetavarkNetwork.subnetsOf(others));
    }

    private JsonNode setup(String netns, NetavarkSetup s) {
        NetworkNamespace container = namespace(netns);
        String owner = s.owner();
        return drivers.with((ContainerSetup d) -> {
            Rollback attached = new Rollback();
            try {
                // Both families' ports in one transaction: every one of them or none.
                Map<InetAddress, List<PortSpec>> ports = new LinkedHashMap<>();
                for (InetAddress ip : s.ip6() == null ? List.of(s.ip4()) : List.of(s.ip4(), s.ip6())) {
                    List<PortSpec> of = new ArrayList<>();
                    s.mappings().forEach(m -> of.addAll(m.specs(NetavarkNetwork.isIpv4(ip))));
                    ports.put(ip, of);
                }
                boolean anyPorts = ports.values().stream().anyMatch(p -> !p.isEmpty());
                Network n = network(d, s, anyPorts, attached);
                if (!anyPorts) {
                    // No ports to carry its entries: a setup that made it for its own may have died before them.
                    d.completeNetwork(n.name());
                }
                removeUnattached(d, n, null);
                // A container id is used once: what an earlier setup left under it (a teardown that never came) goes.
                if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(owner))) {
                    d.detachOwner(n.name(), owner);
                }
                Endpoint e = d.attach(EndpointSpec.on(n.name()).container(container).ifname(s.ifname())
                        .ip(s.ip4()).ip6(s.ip6()).mac(s.mac()).owner(owner).build());
                attached.onFailure(() -> d.detachOwner(n.name(), owner));
                int published = anyPorts ? d.publishAll(new PortsByAddress(n.name(), ports, owner), PODMAN_HOLDS).size() : 0;
                log("setup " + owner + ": " + InetText.of(e.ip()) + " on " + n.name() + " (" + e.hostIfname() + "), "
                        + published + " port mapping(s)");
                return status(n, e, s);
            } catch (RuntimeException x) {
                throw attached.undo(x);
            }
        });
    }

    /**
     * gatun's network of this Podman network: made at its first setup, from the network Podman
     * stored. Made for the {@code ports} to follow, its packet-filter entries go in with them,
     * or by {@code failed} should the setup fail first.
     */
    private Network network(ContainerSetup d, NetavarkSetup s, boolean ports, Rollback failed) {
        String name = s.network().spec().name();
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            Network n = find(d, name);
            if (n == null) {
                try {
                    n = ports ? d.createNetworkForPublish(s.network().spec()) : d.createNetwork(s.network().spec());
                    if (ports) {
                        failed.onFailure(() -> d.completeNetwork(name));
                    }
                    log("created network " + n.name() + " (bridge " + n.bridge() + ", " + n.subnets() + ")");
                } catch (ConflictException | ErrnoException e) {
                    // Another setup (another process) may be making it right now, or a teardown removing it: read again.
                    last = e;
                    sleep(25L * (attempt + 1));
                    continue;
                }
            }
            if (n.subnets().stream().noneMatch(p -> p.contains(s.ip4()))) {
                throw new ConflictException("gatun's network " + n.name() + " has subnets " + n.subnets() + ", not that of "
                        + InetText.of(s.ip4()) + " (a network of that name made before with another subnet: remove it "
                        + "with gatun net rm " + n.name() + ")");
            }
            return n;
        }
        throw last;
    }

    private static Network find(ContainerSetup d, String name) {
        return d.networks().stream().filter(n -> n.name().equals(name)).findFirst().orElse(null);
    }

    /** netavark's StatusBlock: the interface, its MAC, its addresses with their gateways. */
    private static JsonNode status(Network n, Endpoint e, NetavarkSetup s) {
        ObjectNode out = JsonTree.object();
        out.putArray("dns_search_domains");
        out.putArray("dns_server_ips");
        ObjectNode iface = out.putObject("interfaces").putObject(e.ifname());
        iface.put("mac_address", e.mac().toString());
        ArrayNode subnets = iface.putArray("subnets");
        for (InetAddress ip : e.ip6() == null ? List.of(e.ip()) : List.of(e.ip(), e.ip6())) {
            for (int i = 0; i < n.subnets().size(); i++) {
                if (n.subnets().get(i).contains(ip)) {
                    ObjectNode sub = subnets.addObject().put("ipnet", InetText.of(ip) + "/" + n.subnets().get(i).length());
                    if (!s.network().spec().internal() && i < n.gateways().size()) {
                        sub.put("gateway", InetText.of(n.gateways().get(i)));
                    }
                }
            }
        }
        return out;
    }

    private void teardown(String netns, NetavarkSetup s) {
        String owner = s.owner();
        drivers.with((ContainerSetup d) -> {
            Network n = find(d, s.network().spec().name());
            if (n == null) {
                log("teardown " + owner + ": nothing left");
                return null;
            }
            int removed = 0;
            if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(owner))) {
                d.detachOwner(n.name(), owner);
                removed++;
            }
            // Detached, its own mappings go with those of containers that vanished without a teardown.
            removed += removeUnattached(d, n, owner);
            // netavark's bridge goes with its last container; so does gatun's network here.
            boolean last = d.endpoints(n.name()).isEmpty() && d.published(n.name()).isEmpty();
            if (last) {
                d.deleteNetwork(n.name(), false);
            }
            log("teardown " + owner + ": " + (removed == 0 ? "nothing left" : "removed") + (last ? "; network "
                    + n.name() + " removed with its last container" : ""));
            return null;
        });
    }

    /**
     * Removes the mappings on {@code n} of {@code leaving} (the container a teardown detached;
     * null for none) and of containers whose endpoint is gone without a teardown: when a
     * container's namespace goes first (its processes killed, the namespace's mount removed, as
     * after a crash), the kernel takes the veth with it and netavark, unable to open the
     * namespace, never calls the plugin, so nothing else would free their host ports. A setup
     * attaches before it publishes and a teardown detaches before it unpublishes, so a live
     * container's mappings always have their endpoint, or are going anyway. How many went.
     */
    private int removeUnattached(ContainerSetup d, Network n, String leaving) {
        Set<String> attached = new HashSet<>();
        d.endpoints(n.name()).forEach(e -> attached.add(e.owner()));
        Map<String, Set<InetAddress>> going = new LinkedHashMap<>();
        for (PortMapping m : d.published(n.name())) {
            if (m.owner().equals(leaving) || (NetavarkSetup.isOwner(m.owner()) && !attached.contains(m.owner()))) {
                going.computeIfAbsent(m.owner(), k -> new LinkedHashSet<>()).add(m.containerIp());
            }
        }
        int removed = 0;
        for (Map.Entry<String, Set<InetAddress>> g : going.entrySet()) {
            int of = 0;
            for (InetAddress ip : g.getValue()) {
                of += d.unpublish(new PortRequest(n.name(), ip, List.of(), g.getKey())).size();
            }
            if (!g.getKey().equals(leaving)) {
                log("removed " + of + " port mapping(s) of " + g.getKey() + " on " + n.name()
                        + ": its endpoint is gone, with its namespace, and no teardown came");
            }
            removed += of;
        }
        return removed;
    }

    private static NetworkNamespace namespace(String netns) {
        // The path refused, if it is none, before anything is looked up.
        return NetworkNamespace.at(netns);
    }

    private static String netns(List<String> args) {
        if (args.size() < 2 || args.get(1).isEmpty()) {
            throw new InvalidInputException(args.get(0) + " needs the path of the container's network namespace");
        }
        if (args.size() > 2) {
            throw new InvalidInputException(args.get(0) + " takes one argument, the namespace's path, not "
                    + args.subList(1, args.size()));
        }
        return args.get(1);
    }

    private static JsonNode parse(byte[] stdin) {
        if (stdin.length == 0) {
            throw new InvalidInputException("no JSON on stdin");
        }
        try {
            JsonNode n = JsonTree.read(stdin);
            if (n == null || !n.isObject()) {
                throw new InvalidInputException("stdin is not a JSON object");
            }
            return n;
        } catch (JsonProcessingException e) {
            throw new InvalidInputException("stdin is not JSON: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new InvalidInputException("stdin cannot be read: " + e.getMessage());
        }
    }

    private static byte[] json(JsonNode document) {
        return (JsonTree.text(document) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private void log(String line) {
        log.append("gatun: ").append(line).append('\n');
    }

    private byte[] bytes() {
        return log.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
