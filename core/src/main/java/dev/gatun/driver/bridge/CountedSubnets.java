package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.rtnl.Prefix;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;

/**
 * Which mappings carry a counter: those to an address of a network made with counters. Told by
 * the address, not the network's name, so that a mapping read back from the kernel (which names
 * no network) and one being published get the same answer.
 */
record CountedSubnets(List<Prefix> subnets) implements Predicate<PortMapping> {

    static final CountedSubnets NONE = new CountedSubnets(List.of());

    static CountedSubnets of(Collection<Network> networks) {
        List<Prefix> subnets = new ArrayList<>();
        for (Network n : networks) {
            if (n.counters()) {
                subnets.addAll(n.subnets());
            }
        }
        return subnets.isEmpty() ? NONE : new CountedSubnets(List.copyOf(subnets));
    }

    @Override
    public boolean test(PortMapping m) {
        // A loop: on the publish path, and almost always over nothing.
        for (Prefix p : subnets) {
            if (p.contains(m.containerIp())) {
                return true;
            }
        }
        return false;
    }
}
