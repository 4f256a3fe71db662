package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.InvalidInputException;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/** CNI results: their addresses read in any version's shape, and a result written in the config's version. */
final class CniResults {

    private CniResults() {}

    /** An address of a result, with its gateway and the node it was read from. */
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

    /**
     * The container's addresses in a prevResult, as portmap takes them: the first IPv4 and the
     * first IPv6 address on the interface named {@code ifname} inside a sandbox, or on none
     * named (a pod with two interfaces, as Multus makes, has its ports on CNI_IFNAME's).
     */
    static List<Address> containerAddresses(JsonNode prev, String ifname) {
        JsonNode interfaces = prev.path("interfaces");
        Address v4 = null;
        Address v6 = null;
        for (Address a : addresses(prev, "prevResult")) {
            JsonNode idx = a.node().get("interface");
            if (idx != null && idx.isIntegralNumber() && interfaces.has(idx.asInt())) {
                JsonNode at = interfaces.get(idx.asInt());
                if (at.path("sandbox").asText("").isEmpty() || !at.path("name").asText("").equals(ifname)) {
                    continue;
                }
            }
            if (a.prefix().isIpv6()) {
                v6 = v6 == null ? a : v6;
            } else {
                v4 = v4 == null ? a : v4;
            }
        }
        List<Address> out = new ArrayList<>();
        if (v4 != null) {
            out.add(v4);
        }
        if (v6 != null) {
            out.add(v6);
        }
        return out;
    }

    /** A result in {@code version}: 0.3.x and 0.4.0 give each address its IP version, 1.x do not. */
    static ObjectNode converted(ObjectNode result, String version) {
        ObjectNode r = CniConfig.JSON.createObjectNode();
        r.put("cniVersion", version);
        result.fields().forEachRemaining(f -> {
            if (!f.getKey().equals("cniVersion")) {
                r.set(f.getKey(), f.getValue().deepCopy());
            }
        });
        for (JsonNode ip : r.path("ips")) {
            ObjectNode o = (ObjectNode) ip;
            if (CniVersion.ipsHaveVersion(version)) {
                o.put("version", o.path("address").asText().contains(":") ? "6" : "4");
            } else {
                o.remove("version");
            }
        }
        return r;
    }
}
