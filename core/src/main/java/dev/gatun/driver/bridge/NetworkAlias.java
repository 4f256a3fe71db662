package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.InetText;
import dev.gatun.rtnl.Link;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What gatun keeps about a network in its bridge's alias, so that the kernel remembers it:
 * "gatun-network name=n1 v4=10.88.0.0%2F16 gw4=10.88.0.1 icc=1 internal=0 masq=1", with v6 and
 * gw6 when the network has an IPv6 subnet, and counters=1 when its ports count their traffic
 * (left out otherwise, as older aliases have it). The bridge itself gives the name, MAC and MTU.
 */
record NetworkAlias(String name, Prefix subnet4, InetAddress gateway4, Prefix subnet6, InetAddress gateway6,
                    boolean icc, boolean internal, boolean masquerade, boolean counters) {

    static final String KIND = "gatun-network";

    /** The alias text; refused when it would not fit in the kernel's 255 bytes. */
    String encode() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("name", name);
        fields.put("v4", subnet4.toString());
        fields.put("gw4", InetText.of(gateway4));
        fields.put("v6", subnet6 == null ? null : subnet6.toString());
        fields.put("gw6", gateway6 == null ? null : InetText.of(gateway6));
        fields.put("icc", icc ? "1" : "0");
        fields.put("internal", internal ? "1" : "0");
        fields.put("masq", masquerade ? "1" : "0");
        fields.put("counters", counters ? "1" : null);
        return AliasFields.encode(KIND, fields, "network " + name);
    }

    /**
     * The network an alias describes; empty when it is not a network's alias of gatun's, a
     * {@link MalformedAliasException} when it claims to be one but cannot be read.
     */
    static Optional<NetworkAlias> decode(String alias) {
        return AliasFields.decode(KIND, alias).map(f -> {
            Prefix subnet6 = f.prefix("v6", true, false);
            return new NetworkAlias(f.text("name"), f.prefix("v4", false, true), f.address("gw4", false, true),
                    subnet6, subnet6 == null ? null : f.address("gw6", true, true),
                    f.flag("icc"), f.flag("internal"), f.flag("masq"), f.flag("counters"));
        });
    }

    /** The network on {@code bridge}, the link this alias was read from. */
    Network network(Link bridge) {
        List<Prefix> subnets = new ArrayList<>(List.of(subnet4));
        List<InetAddress> gateways = new ArrayList<>(List.of(gateway4));
        if (subnet6 != null) {
            subnets.add(subnet6);
            gateways.add(gateway6);
        }
        return new Network(name, bridge.name(), bridge.mac(), subnets, gateways, icc, internal, masquerade, bridge.mtu(),
                counters);
    }
}
