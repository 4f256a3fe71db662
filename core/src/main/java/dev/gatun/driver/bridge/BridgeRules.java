package dev.gatun.driver.bridge;

import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.rtnl.Prefix;

/**
 * What the firewall does for one bridge: its subnets ({@code v6} may be null) and the options
 * that shape its entries. Without {@code icc}, traffic between two ports of the bridge is
 * dropped by the firewall (an adopted bridge's); gatun's own networks keep their containers
 * apart by port isolation and are icc ones here. {@code counters}: its mappings count their
 * traffic, where the firewall {@link Firewall#countsPorts can}.
 */
record BridgeRules(String bridge, Prefix v4, Prefix v6, boolean icc, boolean internal, boolean masquerade,
                   boolean counters) {

    /** A network of gatun's being made from {@code spec}. */
    static BridgeRules of(String bridge, Prefix v4, Prefix v6, NetworkSpec spec) {
        return new BridgeRules(bridge, v4, v6, true, spec.internal(), spec.masquerade(), spec.counters());
    }

    /** A network as listed (an adopted one with its own icc). */
    static BridgeRules of(Network n) {
        return of(n, n.icc());
    }

    /** A network of gatun's own, icc whatever it says (port isolation keeps its containers apart). */
    static BridgeRules ofOwn(Network n) {
        return of(n, true);
    }

    private static BridgeRules of(Network n, boolean icc) {
        Prefix v4 = n.subnets().stream().filter(p -> !p.isIpv6()).findFirst().orElse(null);
        Prefix v6 = n.subnets().stream().filter(Prefix::isIpv6).findFirst().orElse(null);
        return new BridgeRules(n.bridge(), v4, v6, icc, n.internal(), n.masquerade(), n.counters());
    }

    /** Another program's bridge that gatun adopted: its own icc, never counted. */
    static BridgeRules of(AdoptedBridge b) {
        return new BridgeRules(b.bridge(), b.subnet4(), b.subnet6(), b.icc(), b.internal(), b.masquerade(), false);
    }
}
