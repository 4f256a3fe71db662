package dev.gatun.cli.netavark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.service.DriverOptions;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.Prefix;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A Podman network of driver gatun, as netavark hands it to the plugin (the {@code network}
 * object of containers/netavark's types): read into the spec of gatun's network of that name.
 * At {@code create} the plugin completes it (a free subnet, the gateway, the bridge's name);
 * at {@code setup} it is the spec gatun's network is made from, the first time.
 */
record NetavarkNetwork(ObjectNode raw, NetworkSpec spec) {

    /** Where a network without {@code --subnet} gets its /24 from: next to Podman's own 10.88 and 10.89. */
    static final Prefix POOL = Prefix.parse("10.90.0.0/16");

    static NetavarkNetwork parse(JsonNode network) {
        if (network == null || !network.isObject()) {
            throw new InvalidInputException("the network must be a JSON object");
        }
        ObjectNode raw = (ObjectNode) network;
        String name = text(raw, "name");
        if (name == null) {
            throw new InvalidInputException("the network has no name");
        }
        NetworkSpec.Builder spec = NetworkSpec.named(name);
        Prefix subnet4 = null;
        Prefix subnet6 = null;
        for (JsonNode s : raw.path("subnets")) {
            String text = text(s, "subnet");
            Prefix subnet = prefix(text);
            if (!subnet.equals(subnet.network())) {
                throw new InvalidInputException("subnet " + text + " has host bits set (did you mean "
                        + subnet.network() + "?)");
            }
            if (!s.path("lease_range").isMissingNode() && !s.path("lease_range").isNull()) {
                throw new InvalidInputException("subnet " + text + " has a lease range (--ip-range); gatun's networks "
                        + "take addresses from the whole subnet");
            }
            InetAddress gateway = text(s, "gateway") == null ? null : address(text(s, "gateway"), "gateway");
            if (subnet.isIpv6()) {
                if (subnet6 != null) {
                    throw new InvalidInputException("a gatun network has one IPv6 subnet, not " + subnet6 + " and " + subnet);
                }
                subnet6 = subnet;
                spec.subnet6(subnet).gateway6(gateway);
            } else {
                if (subnet4 != null) {
                    throw new InvalidInputException("a gatun network has one IPv4 subnet, not " + subnet4 + " and " + subnet);
                }
                subnet4 = subnet;
                spec.subnet4(subnet).gateway4(gateway);
            }
            if (gateway != null && (!subnet.contains(gateway) || gateway.equals(subnet.address()))) {
                throw new InvalidInputException("gateway " + InetText.of(gateway) + " is not a host address of subnet "
                        + subnet);
            }
        }
        if (raw.path("ipv6_enabled").asBoolean(false) && subnet6 == null) {
            throw new InvalidInputException("--ipv6 needs an IPv6 --subnet on a gatun network (gatun does not choose one)");
        }
        String ipam = raw.path("ipam_options").path("driver").asText("host-local");
        if (!ipam.equals("host-local")) {
            throw new InvalidInputException("IPAM driver " + ipam + " is not one gatun's networks take (only host-local, "
                    + "Podman's own)");
        }
        String bridge = text(raw, "network_interface");
        JsonNode options = raw.path("options");
        for (Iterator<Map.Entry<String, JsonNode>> it = options.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> o = it.next();
            String value = o.getValue().asText();
            switch (o.getKey()) {
                case DriverOptions.BRIDGE -> {
                    if (bridge != null && !bridge.equals(value)) {
                        throw new InvalidInputException("option " + DriverOptions.BRIDGE + "=" + value + " and --interface-name "
                                + bridge + " name different bridges");
                    }
                    bridge = value;
                }
                case DriverOptions.MTU -> spec.mtu(DriverOptions.number(DriverOptions.MTU, value));
                case DriverOptions.ICC -> spec.icc(DriverOptions.flag(DriverOptions.ICC, value));
                case DriverOptions.COUNTERS -> spec.counters(DriverOptions.flag(DriverOptions.COUNTERS, value));
                default -> throw new InvalidInputException("unknown option " + o.getKey() + " (a gatun network takes "
                        + DriverOptions.ALL + ")");
            }
        }
        if (bridge != null) {
            InterfaceNames.check(bridge);
        }
        spec.bridge(bridge).internal(raw.path("internal").asBoolean(false));
        return new NetavarkNetwork(raw, spec.build());
    }

    /**
     * The network as Podman should store it: a subnet of {@link #POOL} none of {@code taken}
     * overlaps when it has none, the gateway, the bridge's name, host-local IPAM. DNS: see
     * {@link NetavarkPlugin}.
     */
    ObjectNode completed(Collection<Prefix> taken) {
        ObjectNode out = raw.deepCopy();
        if (spec.subnet4() == null && spec.subnet6() == null) {
            Prefix free = freeSubnet(taken);
            out.putArray("subnets").addObject().put("subnet", free.toString())
                    .put("gateway", InetText.of(firstHost(free)));
        } else {
            for (JsonNode s : out.path("subnets")) {
                if (text(s, "gateway") == null) {
                    ((ObjectNode) s).put("gateway", InetText.of(firstHost(prefix(text(s, "subnet")))));
                }
            }
        }
        for (JsonNode s : out.path("subnets")) {
            Prefix subnet = prefix(text(s, "subnet"));
            for (Prefix t : taken) {
                if (t.contains(subnet.address()) || subnet.contains(t.address())) {
                    throw new InvalidInputException("subnet " + subnet + " overlaps " + t + " of another gatun network");
                }
            }
        }
        out.put("network_interface", spec.bridge() != null ? spec.bridge() : NetworkSpec.defaultBridge(spec.name()));
        out.putObject("ipam_options").put("driver", "host-local");
        return out;
    }

    /** The subnets of gatun's networks, which a new one must not overlap. */
    static List<Prefix> subnetsOf(Collection<Network> networks) {
        return networks.stream().flatMap(n -> n.subnets().stream()).toList();
    }

    private static Prefix freeSubnet(Collection<Prefix> taken) {
        byte[] base = POOL.address().getAddress();
        for (int third = 0; third < 256; third++) {
            byte[] a = base.clone();
            a[2] = (byte) third;
            Prefix candidate = new Prefix(addressOf(a), 24);
            if (taken.stream().noneMatch(t -> t.contains(candidate.address()) || candidate.contains(t.address()))) {
                return candidate;
            }
        }
        throw new InvalidInputException("every /24 of " + POOL + " is taken by a gatun network; give --subnet");
    }

    private static InetAddress addressOf(byte[] a) {
        try {
            return InetAddress.getByAddress(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    static InetAddress firstHost(Prefix subnet) {
        byte[] a = subnet.network().address().getAddress();
        a[a.length - 1] |= 1;
        return addressOf(a);
    }

    static String text(JsonNode node, String field) {
        JsonNode v = node.path(field);
        return v.isTextual() && !v.asText().isEmpty() ? v.asText() : null;
    }

    static Prefix prefix(String text) {
        if (text == null) {
            throw new InvalidInputException("a subnet has no \"subnet\"");
        }
        try {
            return Prefix.parse(text);
        } catch (RuntimeException e) {
            throw new InvalidInputException("subnet " + text + " is not an address/length (" + e.getMessage() + ")");
        }
    }

    static InetAddress address(String text, String what) {
        try {
            return Prefix.address(text);
        } catch (RuntimeException e) {
            throw new InvalidInputException(what + " " + text + " is not an IP address");
        }
    }

    static boolean isIpv4(InetAddress a) {
        return a instanceof Inet4Address;
    }
}
