package dev.gatun.driver.bridge;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.conntrack.Conntrack;
import dev.gatun.nft.Element;
import dev.gatun.nft.Nftables;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Asks gatun's set udpheard (see {@link GatunRuleset}) which UDP ports had datagrams that no
 * mapping translated lately: only there can a client that began before a publish hold a
 * conntrack entry that misses it. One round trip, whatever the size of the host's conntrack table.
 */
final class UdpHeard {

    private UdpHeard() {}

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    /**
     * Of {@code ports}, those in udpheard. A table of an older gatun has no such set: nothing is
     * found, as for ports nobody sent to, until the table is brought up to date.
     */
    static Set<Integer> of(Nftables nft, Collection<Integer> ports) {
        List<Integer> asked = ports.size() == 1 ? List.copyOf(ports) : List.copyOf(new LinkedHashSet<>(ports));
        if (asked.isEmpty()) {
            return Set.of();
        }
        List<Nftables.Lookup> lookups = new ArrayList<>(asked.size());
        for (int port : asked) {
            lookups.add(new Nftables.Lookup(GatunRuleset.UDPHEARD, Element.of(Integer.toString(port))));
        }
        List<Optional<Element>> found = nft.elements(lookups);
        Set<Integer> heard = new HashSet<>();
        for (int i = 0; i < asked.size(); i++) {
            if (found.get(i).isPresent()) {
                heard.add(asked.get(i));
            }
        }
        return heard;
    }

    /**
     * Fills udpheard, just made, with the destination port of every UDP conntrack entry no dnat
     * translated: the set's rule saw none of the packets before the table existed, and a client
     * that sent then and sends again after a publish would keep missing it. Made after the
     * table's commit, so that an entry is either found here or seen by the rule. A failure is
     * logged: the table stands, and only such earlier clients are not looked after.
     */
    static void seed(Nftables nft) {
        try (Conntrack conntrack = Conntrack.open(nft.namespace())) {
            Set<Integer> ports = conntrack.untranslatedPorts(libc_h.IPPROTO_UDP);
            if (!ports.isEmpty()) {
                nft.transaction().addElements(GatunRuleset.UDPHEARD,
                        ports.stream().sorted().map(p -> Element.of(Integer.toString(p))).toList()).commit();
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "made " + GatunRuleset.TABLE.describe() + " in "
                    + nft.namespace().describe() + ", but could not read which UDP ports clients sent to before ("
                    + e.getMessage() + "): a client that did and sends again after its port is published may miss "
                    + "it until it stops for 30 s");
        }
    }
}
