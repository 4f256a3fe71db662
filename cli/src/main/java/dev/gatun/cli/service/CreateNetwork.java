package dev.gatun.cli.service;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.util.List;

/** Create a network. */
public record CreateNetwork(NetworkSpec spec) {

    /**
     * From the words of a user: one or two subnets (one IPv4, one IPv6), the others optional
     * (null: the default). Every value is checked here, before anything is sent.
     */
    public static CreateNetwork of(String name, List<String> subnets, String bridge, String gateway, String mac,
                                   Integer mtu, boolean icc, boolean internal, boolean counters) {
        if (subnets.isEmpty()) {
            throw new InvalidInputException("network " + name + " needs a subnet: an IPv4 one, and an IPv6 one if wanted");
        }
        if (subnets.size() > 2) {
            throw new InvalidInputException("give at most two subnets: one IPv4, one IPv6 (network " + name + " got "
                    + subnets.size() + ")");
        }
        Prefix v4 = null;
        Prefix v6 = null;
        for (String s : subnets) {
            Prefix p = Prefix.parse(s);
            if (p.isIpv6()) {
                if (v6 != null) {
                    throw new InvalidInputException("two IPv6 subnets given: " + v6 + " and " + p);
                }
                v6 = p;
            } else {
                if (v4 != null) {
                    throw new InvalidInputException("two IPv4 subnets given: " + v4 + " and " + p);
                }
                v4 = p;
            }
        }
        return new CreateNetwork(NetworkSpec.named(name).bridge(bridge).subnet4(v4)
                .gateway4(gateway == null ? null : Prefix.address(gateway)).subnet6(v6)
                .mac(mac == null ? null : MacAddress.parse(mac)).mtu(mtu).icc(icc).internal(internal).counters(counters).build());
    }
}
