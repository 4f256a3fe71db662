package dev.gatun.cli.docker;

import dev.gatun.cli.events.EventCause;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.service.DriverOptions;
import dev.gatun.cli.service.Failure;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.HostSurvey;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.NotFoundException;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.PortRequest;
import dev.gatun.InetText;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Docker's remote network-driver protocol on top of a {@link NetworkDriver}: each call is a
 * JSON request for one method, answered with a JSON reply or {"Err": ...} and a non-2xx status.
 * State lives where the driver keeps it (the kernel); Docker's ids are the keys: a network is
 * gatun's network named by the first 12 digits of Docker's network id, an endpoint and its
 * published ports are owned by Docker's endpoint id.
 */
public final class DockerPlugin {

    /** An answer: the HTTP status and the JSON body. */
    public record Reply(int status, String json) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String GENERIC = "com.docker.network.generic";
    private static final String PORTMAP = "com.docker.network.portmap";

    private final NetworkDriver driver;
    private final FreePorts freePorts;
    private final Consumer<String> log;
    /** Choosing a free host port and publishing it must not interleave with another choice. */
    private final Object choosing = new Object();

    /** Over {@code driver}'s engine contract; its survey of the host tells which ports are free. */
    public <D extends NetworkDriver & HostSurvey> DockerPlugin(D driver, Consumer<String> log) {
        this.driver = driver;
        this.freePorts = new FreePorts(driver, driver::host);
        this.log = log;
    }

    /** Answers one call; {@code method} is the path without its slash, e.g. "NetworkDriver.Join". */
    public Reply handle(String method, String body) {
        JsonNode request;
        try {
            request = body == null || body.isBlank() ? JSON.createObjectNode() : JSON.readTree(body);
        } catch (JsonProcessingException e) {
            return error(400, method + ": the request is not valid JSON (" + e.getOriginalMessage() + ")");
        }
        if (!request.isObject()) {
            return error(400, method + ": the request must be a JSON object");
        }
        try {
            Object reply = EventCause.as("docker plugin " + method, () -> switch (method) {
                case "Plugin.Activate" -> Map.of("Implements", List.of("NetworkDriver"));
                case "NetworkDriver.GetCapabilities" -> Map.of("Scope", "local", "ConnectivityScope", "local");
                case "NetworkDriver.CreateNetwork" -> createNetwork(request);
                case "NetworkDriver.DeleteNetwork" -> deleteNetwork(request);
                case "NetworkDriver.CreateEndpoint" -> createEndpoint(request);
                case "NetworkDriver.DeleteEndpoint" -> deleteEndpoint(request);
                case "NetworkDriver.EndpointOperInfo" -> endpointInfo(request);
                case "NetworkDriver.Join" -> join(request);
                case "NetworkDriver.Leave" -> Map.of();
                case "NetworkDriver.ProgramExternalConnectivity" -> programExternal(request);
                case "NetworkDriver.RevokeExternalConnectivity" -> revokeExternal(request);
                // Discovery and global allocation are for swarm scopes: nothing to do locally.
                case "NetworkDriver.DiscoverNew", "NetworkDriver.DiscoverDelete", "NetworkDriver.AllocateNetwork",
                     "NetworkDriver.FreeNetwork" -> Map.of();
                default -> throw new UnknownMethod(method);
            });
            return new Reply(200, JSON.writeValueAsString(reply));
        } catch (UnknownMethod e) {
            return error(404, "gatun does not implement " + method);
        } catch (InvalidInputException | ConflictException e) {
            return error(status(e), e.getMessage());
        } catch (GatunException e) {
            log.accept(method + " failed: " + e.getMessage());
            return error(status(e), e.getMessage());
        } catch (JsonProcessingException e) {
            log.accept(method + " failed: " + e.getMessage());
            return error(500, e.getMessage());
        } catch (RuntimeException e) {
            // Unexpected: a bug of ours. Keep the trace for the report.
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            log.accept(method + " failed: " + trace);
            return error(status(e), method + " failed: " + e);
        }
    }

    /**
     * The status of a failure in Docker's terms: the HTTP one, but 400 for a thing that does not
     * exist, since dockerd takes a 404 for a method the plugin does not implement and ignores it
     * for the optional ones (ProgramExternalConnectivity among them).
     */
    public static int status(Throwable e) {
        return Failure.of(e) == Failure.NOT_FOUND ? 400 : ErrorStatus.of(e);
    }

    /** An error answer as Docker shows it: {"Err": message} with a non-2xx status. */
    static Reply error(int status, String message) {
        try {
            return new Reply(status, JSON.writeValueAsString(Map.of("Err", message)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static final class UnknownMethod extends RuntimeException {
        UnknownMethod(String method) {
            super(method, null, false, false);
        }
    }

    // ------------------------------------------------------------------ networks

    private Object createNetwork(JsonNode r) {
        String id = id(r, "NetworkID");
        JsonNode v4 = first(r.path("IPv4Data"));
        if (v4 == null || v4.path("Pool").asText("").isEmpty()) {
            throw new InvalidInputException("network " + id + " has no IPv4 pool; give one with --subnet or Docker's IPAM");
        }
        JsonNode v6 = first(r.path("IPv6Data"));
        JsonNode options = r.path("Options");
        JsonNode generic = options.path(GENERIC);
        String bridge = null;
        Integer mtu = null;
        boolean icc = true;
        boolean counters = false;
        boolean internal = options.path("com.docker.network.internal").asBoolean(false)
                || generic.path("com.docker.network.internal").asBoolean(false);
        for (Iterator<Map.Entry<String, JsonNode>> it = generic.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> o = it.next();
            String value = o.getValue().asText();
            switch (o.getKey()) {
                case DriverOptions.BRIDGE -> bridge = value;
                case DriverOptions.MTU -> mtu = DriverOptions.number(DriverOptions.MTU, value);
                case DriverOptions.ICC -> icc = DriverOptions.flag(DriverOptions.ICC, value);
                case DriverOptions.COUNTERS -> counters = DriverOptions.flag(DriverOptions.COUNTERS, value);
                default -> {
                    if (o.getKey().startsWith("gatun.")) {
                        throw new InvalidInputException("unknown option " + o.getKey()
                                + " (gatun honours " + DriverOptions.ALL + ")");
                    }
                }
            }
        }
        NetworkSpec spec = NetworkSpec.named(networkName(id)).bridge(bridge == null ? "gt-" + networkName(id) : bridge)
                .subnet4(Prefix.parse(v4.path("Pool").asText())).gateway4(gateway(v4))
                .subnet6(v6 == null ? null : Prefix.parse(v6.path("Pool").asText())).gateway6(v6 == null ? null : gateway(v6))
                .mtu(mtu).icc(icc).internal(internal).counters(counters).build();
        Network n = driver.createNetwork(spec);
        log.accept("created network " + n.name() + " (bridge " + n.bridge() + ", " + n.subnets() + ") for Docker network " + id);
        return Map.of();
    }

    private Object deleteNetwork(JsonNode r) {
        Network n = network(r);
        driver.deleteNetwork(n.name(), true);
        log.accept("deleted network " + n.name());
        return Map.of();
    }

    /** gatun's name for a Docker network: the first 12 digits of its id, as Docker's short ids. */
    static String networkName(String dockerId) {
        return dockerId.substring(0, Math.min(12, dockerId.length()));
    }

    private Network network(JsonNode r) {
        String id = id(r, "NetworkID");
        try {
            return driver.network(networkName(id));
        } catch (NotFoundException e) {
            throw new NotFoundException("unknown network id " + id + " (no gatun network " + networkName(id) + ")");
        }
    }

    private static InetAddress gateway(JsonNode ipamData) {
        String gw = ipamData.path("Gateway").asText("");
        if (gw.isEmpty()) {
            return null;
        }
        int slash = gw.indexOf('/');
        return Prefix.address(slash < 0 ? gw : gw.substring(0, slash));
    }

    // ------------------------------------------------------------------ endpoints

    private Object createEndpoint(JsonNode r) {
        Network n = network(r);
        String endpoint = id(r, "EndpointID");
        JsonNode iface = r.path("Interface");
        InetAddress ip = address(iface.path("Address").asText(""));
        if (ip == null) {
            throw new InvalidInputException("endpoint " + endpoint + " has no IPv4 address from Docker's IPAM");
        }
        InetAddress ip6 = address(iface.path("AddressIPv6").asText(""));
        String givenMac = iface.path("MacAddress").asText("");
        MacAddress mac = givenMac.isEmpty() ? null : MacAddress.parse(givenMac);
        // No container: Docker moves the interface itself.
        Endpoint e = driver.attach(EndpointSpec.on(n.name()).ip(ip).ip6(ip6).mac(mac).owner(endpoint).build());
        log.accept("created endpoint " + endpoint + " (" + InetText.of(e.ip()) + ", " + e.hostIfname() + ")");
        // Docker takes from the reply only what it did not give.
        return givenMac.isEmpty() ? Map.of("Interface", Map.of("MacAddress", e.mac().toString())) : Map.of();
    }

    private static InetAddress address(String cidr) {
        if (cidr.isEmpty()) {
            return null;
        }
        return Prefix.parse(cidr).address();
    }

    private Object deleteEndpoint(JsonNode r) {
        Network n = network(r);
        String endpoint = id(r, "EndpointID");
        driver.detachOwner(n.name(), endpoint);
        log.accept("deleted endpoint " + endpoint);
        return Map.of();
    }

    private Endpoint endpoint(Network n, String endpointId) {
        return driver.endpoints(n.name()).stream().filter(e -> e.owner().equals(endpointId)).findFirst()
                .orElseThrow(() -> new NotFoundException("unknown endpoint id " + endpointId + " on network " + n.name()));
    }

    private Object endpointInfo(JsonNode r) {
        Endpoint e = endpoint(network(r), id(r, "EndpointID"));
        // No port map here: Docker 20.10 fails its type check on one and then hides every port.
        return Map.of("Value", Map.of("ip", InetText.of(e.ip()), "host_interface", e.hostIfname()));
    }

    private Object join(JsonNode r) {
        Network n = network(r);
        Endpoint e = endpoint(n, id(r, "EndpointID"));
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("InterfaceName", Map.of("SrcName", e.ifname(), "DstPrefix", "eth"));
        // Without a gateway Docker would also attach the container to its own docker_gwbridge.
        reply.put("Gateway", InetText.of(n.gateways().getFirst()));
        if (e.ip6() != null && n.gateways().size() > 1) {
            reply.put("GatewayIPv6", InetText.of(n.gateways().get(1)));
        }
        return reply;
    }

    // ------------------------------------------------------------------ published ports

    private Object programExternal(JsonNode r) {
        Network n = network(r);
        String endpointId = id(r, "EndpointID");
        Endpoint e = endpoint(n, endpointId);
        JsonNode bindings = r.path("Options").path(PORTMAP);
        if (bindings.isMissingNode() || bindings.isNull() || bindings.isEmpty()) {
            return Map.of();
        }
        if (!bindings.isArray()) {
            throw new InvalidInputException(PORTMAP + " must be a list of port bindings");
        }
        List<Binding> wanted = new ArrayList<>();
        for (JsonNode b : bindings) {
            Binding binding = Binding.of(b);
            if (binding.hostIp() == null && binding.anyIpv6() && e.ip6() == null) {
                // Docker adds [::]:port beside 0.0.0.0:port; a container without IPv6 has nothing to map it to.
                continue;
            }
            wanted.add(binding);
        }
        synchronized (choosing) {
            Map<InetAddress, List<PortSpec>> byContainer = new LinkedHashMap<>();
            for (Binding b : wanted) {
                InetAddress target = b.anyIpv6() || b.hostIp() instanceof Inet6Address ? e.ip6() : e.ip();
                if (target == null) {
                    throw new InvalidInputException("port binding " + b + ": endpoint " + endpointId + " has no IPv6 address");
                }
                int hostPort = b.hostPort();
                if (hostPort == 0 || b.hostPortEnd() > b.hostPort()) {
                    hostPort = freePorts.lowest(b.protocol(), b.hostIp(), b.hostPort(), b.hostPortEnd(), byContainer);
                }
                byContainer.computeIfAbsent(target, k -> new ArrayList<>())
                        .add(new PortSpec(b.hostIp(), hostPort, hostPort, b.port(), b.port(), b.protocol()));
            }
            // Both families in one transaction: every binding or none.
            List<PortMapping> made = byContainer.isEmpty() ? List.of()
                    : driver.publishAll(new PortsByAddress(n.name(), byContainer, endpointId), HostPortCheck.CHECK);
            made.forEach(m -> log.accept("published " + m.describe() + " for endpoint " + endpointId));
        }
        return Map.of();
    }

    private Object revokeExternal(JsonNode r) {
        Network n = network(r);
        String endpointId = id(r, "EndpointID");
        Endpoint e = endpoint(n, endpointId);
        for (InetAddress ip : e.ip6() == null ? List.of(e.ip()) : List.of(e.ip(), e.ip6())) {
            driver.unpublish(new PortRequest(n.name(), ip, List.of(), endpointId))
                    .forEach(m -> log.accept("unpublished " + m.describe() + " of endpoint " + endpointId));
        }
        return Map.of();
    }

    /** One entry of Docker's port map: {Proto, IP, Port, HostIP, HostPort, HostPortEnd}. */
    record Binding(Protocol protocol, int port, InetAddress hostIp, boolean anyIpv6, int hostPort, int hostPortEnd) {

        static Binding of(JsonNode b) {
            if (!b.isObject()) {
                throw new InvalidInputException("a port binding must be an object, not " + b);
            }
            int proto = b.path("Proto").asInt(-1);
            Protocol protocol = switch (proto) {
                case 6 -> Protocol.TCP;
                case 17 -> Protocol.UDP;
                case 132 -> Protocol.SCTP;
                default -> throw new InvalidInputException("port binding " + b + ": protocol number " + b.path("Proto")
                        + " is not tcp (6), udp (17) or sctp (132)");
            };
            int port = port(b, "Port", 1);
            int hostPort = port(b, "HostPort", 0);
            int hostPortEnd = b.has("HostPortEnd") ? port(b, "HostPortEnd", 0) : hostPort;
            if (hostPortEnd != 0 && hostPortEnd < hostPort) {
                throw new InvalidInputException("port binding " + b + ": HostPortEnd " + hostPortEnd
                        + " is below HostPort " + hostPort);
            }
            String hostIpText = b.path("HostIP").asText("");
            InetAddress hostIp = hostIpText.isEmpty() ? null : Prefix.address(hostIpText);
            boolean anyIpv6 = hostIp != null && hostIp.isAnyLocalAddress() && !(hostIp instanceof Inet4Address);
            if (hostIp != null && hostIp.isAnyLocalAddress()) {
                hostIp = null;
            }
            return new Binding(protocol, port, hostIp, anyIpv6, hostPort, Math.max(hostPortEnd, hostPort));
        }

        private static int port(JsonNode b, String field, int lowest) {
            JsonNode v = b.path(field);
            if (!v.canConvertToInt() || v.asInt() < lowest || v.asInt() > 65535) {
                throw new InvalidInputException("port binding " + b + ": " + field + " " + v + " is out of range "
                        + lowest + "-65535");
            }
            return v.asInt();
        }

        @Override
        public String toString() {
            return (hostIp == null ? (anyIpv6 ? "[::]" : "*") : InetText.of(hostIp)) + ":" + hostPort
                    + (hostPortEnd > hostPort ? "-" + hostPortEnd : "") + "->" + port + "/" + protocol.keyword();
        }
    }

    // ------------------------------------------------------------------ request fields

    private static String id(JsonNode r, String field) {
        String v = r.path(field).asText("");
        if (!v.matches("[0-9a-zA-Z_.-]{1,128}")) {
            throw new InvalidInputException(field + " " + (v.isEmpty() ? "is missing" : "'" + v + "' is not an id"));
        }
        return v;
    }

    private static JsonNode first(JsonNode list) {
        return list.isArray() && !list.isEmpty() ? list.get(0) : null;
    }
}
