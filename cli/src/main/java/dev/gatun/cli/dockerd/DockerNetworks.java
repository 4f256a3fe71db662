package dev.gatun.cli.dockerd;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.driver.AdoptedBridge;
import dev.gatun.rtnl.Prefix;

import java.util.ArrayList;
import java.util.List;

/**
 * Docker's networks of its {@code bridge} driver as bridges gatun adopts, read from
 * {@code GET /networks} as dockerd records them: the bridge's name (option
 * {@code com.docker.network.bridge.name}, else dockerd's {@code br-} and the id's first 12
 * digits), the IPAM subnets, {@code Internal}, traffic between its containers unless
 * {@code com.docker.network.bridge.enable_icc} is false, and masquerade unless
 * {@code com.docker.network.bridge.enable_ip_masquerade} is false (on a network other than the
 * default bridge: see {@link #bridge}).
 */
final class DockerNetworks {

    /** The prefix of every adopted bridge's name that is a Docker network's: {@code docker:} and its short id. */
    static final String NAME_PREFIX = "docker:";

    private DockerNetworks() {}

    static boolean isDockers(AdoptedBridge b) {
        return b.name().startsWith(NAME_PREFIX);
    }

    /** The bridges of the networks in {@code list} (the answer of GET /networks); other drivers' are left out. */
    static List<AdoptedBridge> bridges(JsonNode list) {
        List<AdoptedBridge> out = new ArrayList<>();
        for (JsonNode n : list) {
            AdoptedBridge b = bridge(n);
            if (b != null) {
                out.add(b);
            }
        }
        return out;
    }

    /** One network's bridge; null for another driver's network, or one with no IPv4 subnet. */
    static AdoptedBridge bridge(JsonNode n) {
        if (!n.path("Driver").asText().equals("bridge")) {
            return null;
        }
        String id = n.path("Id").asText("");
        String shortId = id.substring(0, Math.min(12, id.length()));
        JsonNode options = n.path("Options");
        String bridge = options.path("com.docker.network.bridge.name").asText("");
        if (bridge.isEmpty()) {
            bridge = "br-" + shortId;
        }
        Prefix v4 = null;
        Prefix v6 = null;
        for (JsonNode c : n.path("IPAM").path("Config")) {
            String subnet = c.path("Subnet").asText("");
            if (subnet.isEmpty()) {
                continue;
            }
            Prefix p = Prefix.parse(subnet);
            if (p.isIpv6() && v6 == null && n.path("EnableIPv6").asBoolean(false)) {
                v6 = p;
            } else if (!p.isIpv6() && v4 == null) {
                v4 = p;
            }
        }
        if (v4 == null) {
            return null;
        }
        // dockerd writes masquerade off on its default bridge whenever its own iptables are off
        // (--iptables=false turns --ip-masq off): there the option says nothing of what is wanted.
        boolean defaultBridge = options.path("com.docker.network.bridge.default_bridge").asText("").equals("true");
        boolean masquerade = defaultBridge
                || !options.path("com.docker.network.bridge.enable_ip_masquerade").asText("true").equals("false");
        boolean icc = !options.path("com.docker.network.bridge.enable_icc").asText("true").equals("false");
        return new AdoptedBridge(NAME_PREFIX + shortId, bridge, v4, v6, icc, n.path("Internal").asBoolean(false), masquerade);
    }
}
