package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.nft.Element;
import dev.gatun.nft.NftSet;
import dev.gatun.rtnl.Prefix;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A network's elements in the sets of gatun's table (see {@link GatunRuleset}): its bridge and
 * its subnets, by the options that put them there.
 */
final class NetworkEntries {

    private NetworkEntries() {}

    /**
     * The elements of a network on {@code bridge}, one per set it is in. Without {@code icc},
     * not its pair in samebridge, so that traffic between two of its ports is dropped (an adopted
     * bridge's; gatun's own networks keep their containers apart by port isolation and are
     * passed here as icc ones).
     */
    static Map<NftSet, Element> of(String bridge, Prefix v4, Prefix v6, boolean icc, boolean internal, boolean masquerade,
                                   boolean counters) {
        Map<NftSet, Element> elements = new LinkedHashMap<>();
        elements.put(GatunRuleset.BRIDGES, Element.of(bridge));
        if (icc) {
            elements.put(GatunRuleset.SAMEBRIDGE, Element.of(bridge, bridge));
        }
        if (internal) {
            elements.put(GatunRuleset.INTERNAL, Element.of(bridge));
        }
        if (counters) {
            elements.put(GatunRuleset.COUNTED, Element.of(bridge));
        }
        elements.put(GatunRuleset.SUBNETS4, Element.of(v4.toString()));
        if (masquerade && !internal) {
            elements.put(GatunRuleset.MASQ4, Element.of(v4.toString()));
        }
        if (v6 != null) {
            elements.put(GatunRuleset.SUBNETS6, Element.of(v6.toString()));
            if (masquerade && !internal) {
                elements.put(GatunRuleset.MASQ6, Element.of(v6.toString()));
            }
        }
        return elements;
    }

    static Map<NftSet, Element> of(Network n) {
        Prefix v6 = n.subnets().size() > 1 ? n.subnets().get(1) : null;
        return of(n.bridge(), n.subnets().getFirst(), v6, n.icc(), n.internal(), n.masquerade(), n.counters());
    }

    /** The elements {@code networks} want in {@code set}. */
    static List<Element> in(NftSet set, List<Network> networks) {
        List<Element> out = new ArrayList<>();
        for (Network n : networks) {
            Element e = of(n).get(set);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }
}
