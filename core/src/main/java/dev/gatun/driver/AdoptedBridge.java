package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import dev.gatun.rtnl.Prefix;

/**
 * Another program's bridge that gatun keeps the packet filter of, as it keeps its own networks'
 * (dockerd's with {@code --iptables=false}): masquerade of its subnets' outbound traffic (unless
 * {@code masquerade} is false), forwarding out of it, nothing into it but replies and published
 * ports, isolation from every other network, without {@code icc} no traffic between two of its
 * ports (where bridged traffic passes the packet filter, br_netfilter, as Docker's own rule needs
 * too), and with {@code internal} no way in or out. The
 * bridge, its addresses and its ports stay the other program's.
 *
 * @param name    who it is, for people and logs ({@code docker:bridge}); at most 64 bytes
 * @param bridge  the bridge's interface name
 * @param subnet4 its IPv4 subnet
 * @param subnet6 its IPv6 subnet, or null
 */
public record AdoptedBridge(String name, String bridge, Prefix subnet4, Prefix subnet6, boolean icc, boolean internal,
                            boolean masquerade) {

    public AdoptedBridge {
        if (name == null || name.isEmpty() || name.length() > 64 || !name.matches("[\\x21-\\x7e]+")) {
            throw new InvalidInputException("an adopted bridge's name must be 1 to 64 printable characters without"
                    + " spaces, not '" + name + "'");
        }
        if (bridge == null || bridge.isEmpty()) {
            throw new InvalidInputException("adopted bridge " + name + " needs an interface name");
        }
        if (subnet4 == null || subnet4.isIpv6()) {
            throw new InvalidInputException("adopted bridge " + name + " (" + bridge + ") needs an IPv4 subnet, not " + subnet4);
        }
        subnet4 = subnet4.network();
        if (subnet6 != null) {
            if (!subnet6.isIpv6()) {
                throw new InvalidInputException("the second subnet of adopted bridge " + name + " must be IPv6, not " + subnet6);
            }
            subnet6 = subnet6.network();
        }
    }
}
