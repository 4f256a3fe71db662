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
     * The elements of a bridge's entries, one per set it is in. Without icc, not its pair in
     * samebridge, so that traffic between two of its ports is dropped.
     */
    static Map<NftSet, Element> of(BridgeRules r) {
        String bridge = r.bridge();
        Prefix v4 = r.v4();
        Prefix v6 = r.v6();
        boolean masquerade = r.masquerade() && !r.internal();
        Map<NftSet, Element> elements = new LinkedHashMap<>();
        elements.put(GatunRuleset.BRIDGES, Element.of(bridge));
        if (r.icc()) {
            elements.put(GatunRuleset.SAMEBRIDGE, Element.of(bridge, bridge));
        }
        if (r.internal()) {
            elements.put(GatunRuleset.INTERNAL, Element.of(bridge));
        }
        if (r.counters()) {
            elements.put(GatunRuleset.COUNTED, Element.of(bridge));
        }
        elements.put(GatunRuleset.SUBNETS4, Element.of(v4.toString()));
        if (masquerade) {
            elements.put(GatunRuleset.MASQ4, Element.of(v4.toString()));
        }
        if (v6 != null) {
            elements.put(GatunRuleset.SUBNETS6, Element.of(v6.toString()));
            if (masquerade) {
                elements.put(GatunRuleset.MASQ6, Element.of(v6.toString()));
            }
        }
        return elements;
    }

    static Map<NftSet, Element> of(Network n) {
        return of(BridgeRules.of(n));
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
