package dev.gatun.cli.netavark;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code setup} and {@code teardown} get on stdin (netavark's NetworkPluginExec): the
 * container, its network, its interface and addresses on it, and its port mappings, each read
 * and checked before anything is sent to the kernel.
 */
record NetavarkSetup(String containerId, String containerName, NetavarkNetwork network, String ifname,
                     InetAddress ip4, InetAddress ip6, MacAddress mac, List<Mapping> mappings) {

    /** One entry of {@code port_mappings}: {@code range} ports from each start, per protocol. */
    record Mapping(InetAddress hostIp, int hostPort, int containerPort, int range, List<Protocol> protocols) {

        /** The mapping as gatun's port specs for a container address of {@code family4}'s family; empty when of the other. */
        List<PortSpec> specs(boolean family4) {
            if (hostIp != null && (hostIp instanceof Inet4Address) != family4) {
                return List.of();
            }
            return protocols.stream().map(p -> new PortSpec(hostIp, hostPort, hostPort + range - 1, containerPort,
                    containerPort + range - 1, p)).toList();
        }
    }

    static NetavarkSetup parse(JsonNode in, boolean setup) {
        if (in == null || !in.isObject()) {
            throw new InvalidInputException("the input must be a JSON object (netavark's NetworkPluginExec)");
        }
        String id = NetavarkNetwork.text(in, "container_id");
        if (id == null || !id.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")) {
            throw new InvalidInputException("container_id " + (id == null ? "is missing" : "'" + id + "' is not a container id"));
        }
        NetavarkNetwork network = NetavarkNetwork.parse(in.get("network"));
        JsonNode options = in.path("network_options");
        String ifname = NetavarkNetwork.text(options, "interface_name");
        if (ifname == null) {
            throw new InvalidInputException("network_options.interface_name is missing");
        }
        InetAddress ip4 = null;
        InetAddress ip6 = null;
        for (JsonNode ip : options.path("static_ips")) {
            InetAddress a = NetavarkNetwork.address(ip.asText(), "static_ips entry");
            boolean four = a instanceof Inet4Address;
            if ((four ? ip4 : ip6) != null) {
                throw new InvalidInputException("static_ips has two " + (four ? "IPv4" : "IPv6") + " addresses ("
                        + InetText.of(four ? ip4 : ip6) + ", " + InetText.of(a) + "); a gatun network has one subnet of each");
            }
            Prefix subnet = four ? network.spec().subnet4() : network.spec().subnet6();
            if (subnet == null || !subnet.contains(a)) {
                throw new InvalidInputException("static_ips entry " + InetText.of(a) + " is in no subnet of network "
                        + network.spec().name());
            }
            if (four) {
                ip4 = a;
            } else {
                ip6 = a;
            }
        }
        if (setup && ip4 == null) {
            throw new InvalidInputException("network_options.static_ips has no IPv4 address (gatun's networks need one; "
                    + "Podman gives them with host-local IPAM)");
        }
        String macText = NetavarkNetwork.text(options, "static_mac");
        MacAddress mac = macText == null ? null : MacAddress.parse(macText);
        List<Mapping> mappings = new ArrayList<>();
        for (JsonNode m : in.path("port_mappings")) {
            mappings.add(mapping(m));
        }
        return new NetavarkSetup(id, NetavarkNetwork.text(in, "container_name"), network, ifname, ip4, ip6, mac, mappings);
    }

    private static Mapping mapping(JsonNode m) {
        int host = port(m, "host_port");
        int container = port(m, "container_port");
        int range = m.path("range").asInt(1);
        if (range < 1 || host + range - 1 > 65535 || container + range - 1 > 65535) {
            throw new InvalidInputException("port mapping " + host + ":" + container + " has range " + range
                    + ", which runs past port 65535 or is not positive");
        }
        String hostIp = NetavarkNetwork.text(m, "host_ip");
        List<Protocol> protocols = new ArrayList<>();
        String text = m.path("protocol").asText("tcp");
        for (String p : text.split(",")) {
            protocols.add(Protocol.parse(p.trim()));
        }
        return new Mapping(hostIp == null ? null : NetavarkNetwork.address(hostIp, "host_ip"), host, container, range,
                List.copyOf(protocols));
    }

    private static int port(JsonNode m, String field) {
        JsonNode v = m.path(field);
        if (!v.canConvertToInt() || v.asInt() < 1 || v.asInt() > 65535) {
            throw new InvalidInputException("port mapping " + field + " " + (v.isMissingNode() ? "is missing" : v.asText()
                    + " is not a port (1-65535)"));
        }
        return v.asInt();
    }

    /** What gatun's endpoint and mappings of this container on this network are owned by. */
    String owner() {
        return containerId + "/" + ifname;
    }

    /** Whether {@code owner} is of the shape {@link #owner()} gives: a Podman container id, a slash, an interface. */
    static boolean isOwner(String owner) {
        return owner != null && owner.matches("[0-9a-f]{64}/.+");
    }
}
