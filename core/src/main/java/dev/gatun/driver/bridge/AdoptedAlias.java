package dev.gatun.driver.bridge;

import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.Network;
import dev.gatun.rtnl.Prefix;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What gatun keeps about a bridge it adopted, in that bridge's alias, so that the kernel
 * remembers it as it remembers gatun's own networks: "gatun-adopted name=docker:bridge
 * v4=172.17.0.0%2F16 icc=1 internal=0 masq=1", with v6 when there is one, and localnet=1 when gatun
 * turned the bridge's route_localnet on (and turns it off again when it lets go). A different kind
 * from a network's alias: an adopted bridge is never listed, changed or deleted as a network of gatun's.
 */
record AdoptedAlias(AdoptedBridge bridge, boolean localnetByGatun) {

    static final String KIND = "gatun-adopted";

    String encode() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("name", bridge.name());
        fields.put("v4", bridge.subnet4().toString());
        fields.put("v6", bridge.subnet6() == null ? null : bridge.subnet6().toString());
        fields.put("icc", bridge.icc() ? "1" : "0");
        fields.put("internal", bridge.internal() ? "1" : "0");
        fields.put("masq", bridge.masquerade() ? "1" : "0");
        fields.put("localnet", localnetByGatun ? "1" : null);
        return AliasFields.encode(KIND, fields, "adopted bridge " + bridge.name());
    }

    /** The adopted bridge {@code alias} describes, on the link {@code ifname}; empty when it is not such an alias. */
    static Optional<AdoptedAlias> decode(String ifname, String alias) {
        return AliasFields.decode(KIND, alias).map(f -> new AdoptedAlias(new AdoptedBridge(f.text("name"), ifname,
                f.prefix("v4", false, true), f.prefix("v6", true, false), f.flag("icc"), f.flag("internal"), f.flag("masq")), f.flag("localnet")));
    }

    /** The bridge as the packet filter sees a network: its entries are a network's. */
    static Network asNetwork(AdoptedBridge b) {
        List<Prefix> subnets = new ArrayList<>(List.of(b.subnet4()));
        if (b.subnet6() != null) {
            subnets.add(b.subnet6());
        }
        return new Network(b.name(), b.bridge(), null, subnets, List.of(), b.icc(), b.internal(), b.masquerade(), 0);
    }
}
