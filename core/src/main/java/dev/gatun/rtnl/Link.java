package dev.gatun.rtnl;

/**
 * A network interface as rtnetlink reports it. {@code kind} is the link type ("bridge",
 * "veth", or null for a physical or loopback device); {@code master} is the index of the
 * bridge it is attached to, or 0.
 */
public record Link(int index, String name, String kind, MacAddress mac, int mtu, int master, boolean up,
                   OperState operState, String alias) {

    /** RFC 2863 operational state, as the kernel reports it in IFLA_OPERSTATE. */
    public enum OperState { UNKNOWN, NOTPRESENT, DOWN, LOWERLAYERDOWN, TESTING, DORMANT, UP }
}
