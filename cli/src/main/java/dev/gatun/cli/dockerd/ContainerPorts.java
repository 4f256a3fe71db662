package dev.gatun.cli.dockerd;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.Prefix;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one running container publishes, read from its inspect document as dockerd recorded it
 * ({@code NetworkSettings.Ports}: the host address and port dockerd chose for each binding,
 * random ports and ranges already resolved): the ports by target address, on the network that
 * carries them.
 *
 * @param owner   the owner of its mappings in gatun: {@code docker:} and the container's id
 * @param network the name of the Docker network whose address the ports go to (null: none)
 * @param ports   the port specs by container address (IPv4, and IPv6 where the network gives one)
 */
record ContainerPorts(String owner, String network, String networkId, Map<InetAddress, List<PortSpec>> ports) {

    /** The prefix of every owner gatun gives Docker's containers: the owner says whose a mapping is. */
    static final String OWNER_PREFIX = "docker:";

    static String ownerOf(String containerId) {
        return OWNER_PREFIX + containerId;
    }

    static boolean isDockerOwner(String owner) {
        return owner.startsWith(OWNER_PREFIX);
    }

    /**
     * The ports of the container {@code inspect} describes. The target is its address on the
     * network that gives it its gateway (Docker publishes on that endpoint); of several such, the
     * first by name. No address there (network mode host or none, a stopped container): no ports.
     */
    static ContainerPorts of(JsonNode inspect) {
        String id = inspect.path("Id").asText("");
        if (id.isEmpty()) {
            throw new InvalidInputException("a container's inspect document without an Id");
        }
        JsonNode settings = inspect.path("NetworkSettings");
        String network = null;
        JsonNode endpoint = null;
        List<String> names = new ArrayList<>();
        settings.path("Networks").fieldNames().forEachRemaining(names::add);
        names.sort(null);
        for (String name : names) {
            JsonNode e = settings.path("Networks").path(name);
            if (!e.path("IPAddress").asText("").isEmpty() && !e.path("Gateway").asText("").isEmpty()) {
                network = name;
                endpoint = e;
                break;
            }
        }
        Map<InetAddress, List<PortSpec>> ports = new LinkedHashMap<>();
        if (endpoint == null || !inspect.path("State").path("Running").asBoolean(true)) {
            return new ContainerPorts(ownerOf(id), null, null, ports);
        }
        InetAddress ip4 = Prefix.address(endpoint.path("IPAddress").asText());
        String v6 = endpoint.path("GlobalIPv6Address").asText("");
        InetAddress ip6 = v6.isEmpty() ? null : Prefix.address(v6);
        return new ContainerPorts(ownerOf(id), network, endpoint.path("NetworkID").asText(null),
                bindings(settings.path("Ports"), ip4, ip6, false));
    }

    /**
     * What container {@code id} asked for when it was created ({@code hostConfig}: the host
     * config dockerd wrote then), to the addresses {@code ip4} and {@code ip6} (null: none) it
     * has on network {@code network}: only the bindings that name their host port (a random one,
     * or one from a range, is known once dockerd chose it); one without a host address goes to
     * both, as dockerd records it twice (0.0.0.0 and [::]). For publishing while dockerd is still
     * starting the container, before its recorded bindings can be read.
     */
    static ContainerPorts requested(String id, JsonNode hostConfig, String network, String networkId, InetAddress ip4,
                                    InetAddress ip6) {
        return new ContainerPorts(ownerOf(id), network, networkId, bindings(hostConfig.path("PortBindings"), ip4, ip6, true));
    }

    /**
     * The port specs of a bindings object ("80/tcp": [{HostIp, HostPort}]) by target address; ones
     * without one host port left out. {@code noAddressIsBoth}: a binding without a host address
     * goes to {@code ip6} too (a request; dockerd's record names the address of each).
     */
    private static Map<InetAddress, List<PortSpec>> bindings(JsonNode all, InetAddress ip4, InetAddress ip6,
                                                             boolean noAddressIsBoth) {
        Map<InetAddress, List<PortSpec>> ports = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = all.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> binding = it.next();
            if (!binding.getValue().isArray()) {
                continue; // exposed, not published
            }
            int slash = binding.getKey().indexOf('/');
            int containerPort = port(slash < 0 ? binding.getKey() : binding.getKey().substring(0, slash), binding.getKey());
            Protocol protocol = protocol(slash < 0 ? "tcp" : binding.getKey().substring(slash + 1), binding.getKey());
            for (JsonNode b : binding.getValue()) {
                String hostPort = b.path("HostPort").asText("");
                if (hostPort.isEmpty() || hostPort.contains("-")) {
                    continue; // random, or a range to choose from (-p 9000-9010:80): known once dockerd chose
                }
                String hostIp = b.path("HostIp").asText("");
                boolean anyV4 = hostIp.isEmpty() || hostIp.equals("0.0.0.0");
                boolean anyV6 = hostIp.equals("::");
                InetAddress host = anyV4 || anyV6 ? null : Prefix.address(hostIp);
                InetAddress target = anyV6 || host instanceof Inet6Address ? ip6 : ip4;
                if (target == null) {
                    continue; // dockerd adds [::]:port beside 0.0.0.0:port; no IPv6 address to send it to
                }
                int h = port(hostPort, binding.getKey());
                PortSpec spec = new PortSpec(host, h, h, containerPort, containerPort, protocol);
                ports.computeIfAbsent(target, k -> new ArrayList<>()).add(spec);
                if (noAddressIsBoth && hostIp.isEmpty() && ip6 != null) {
                    ports.computeIfAbsent(ip6, k -> new ArrayList<>()).add(spec);
                }
            }
        }
        return ports;
    }

    private static int port(String text, String binding) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new InvalidInputException("port binding " + binding + " of dockerd has port '" + text + "', not a number");
        }
    }

    private static Protocol protocol(String text, String binding) {
        try {
            return Protocol.parse(text);
        } catch (InvalidInputException e) {
            throw new InvalidInputException("port binding " + binding + " of dockerd: " + e.getMessage());
        }
    }
}
