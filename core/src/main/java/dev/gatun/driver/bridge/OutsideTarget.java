package dev.gatun.driver.bridge;

import dev.gatun.InetText;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;

/**
 * A container outside gatun's networks that mappings go to (a CNI chain's, after {@code bridge}
 * or {@code ptp}), as the packet filter keeps it so that its localhost and hairpin connections
 * are masqueraded: the host interface it is reached by, its address, the route that reaches it
 * (where hairpin sources come from, for a filter that cannot match the input interface there),
 * and whether gatun turned {@code route_localnet} on for that interface (and turns it off again
 * with the interface's last target).
 */
record OutsideTarget(String hostIfname, InetAddress containerIp, Prefix route, boolean localnetByGatun) {

    boolean isIpv6() {
        return route.isIpv6();
    }

    String describe() {
        return InetText.of(containerIp) + " by " + hostIfname;
    }
}
