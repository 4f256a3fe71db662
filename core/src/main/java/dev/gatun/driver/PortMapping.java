package dev.gatun.driver;

import dev.gatun.InetText;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Objects;

/**
 * One published port: traffic to {@code hostIp:hostPort} (every local address when hostIp is
 * null) goes to {@code containerIp:containerPort}. {@code owner} is who published it.
 */
public record PortMapping(String network, Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp,
                          int containerPort, String owner) {

    /** Who publishes (or attaches) when no owner is given: the container's address, as text. */
    public static String ownerOr(String owner, InetAddress containerIp) {
        return owner != null ? owner : InetText.of(containerIp);
    }

    /**
     * What identifies a mapping, so that two with the same key cannot both be published: the
     * address family, the host address (null for every address), the protocol and the host port.
     */
    public record HostKey(boolean ipv4, InetAddress hostIp, Protocol protocol, int hostPort) {
        // Written out: a record's generated hash goes through method handles, more code to run cold.
        @Override
        public boolean equals(Object o) {
            return o instanceof HostKey k && k.hostPort == hostPort && k.protocol == protocol && k.ipv4 == ipv4
                    && Objects.equals(k.hostIp, hostIp);
        }

        @Override
        public int hashCode() {
            return ((hostPort * 31 + protocol.ordinal()) * 31 + (hostIp == null ? 0 : hostIp.hashCode())) * 2 + (ipv4 ? 1 : 0);
        }
    }

    public HostKey hostKey() {
        return new HostKey(containerIp instanceof Inet4Address, hostIp, protocol, hostPort);
    }

    /** "host:port -> container:port/protocol", with "*" for every address and IPv6 in brackets. */
    public String describe() {
        return endpoint(hostIp, hostPort) + " -> " + endpoint(containerIp, containerPort) + "/" + protocol.keyword();
    }

    /** The host side alone: "host:port/protocol". */
    public String describeHost() {
        return endpoint(hostIp, hostPort) + "/" + protocol.keyword();
    }

    private static String endpoint(InetAddress ip, int port) {
        if (ip == null) {
            return "*:" + port;
        }
        String text = InetText.of(ip);
        return (ip instanceof Inet4Address ? text : "[" + text + "]") + ":" + port;
    }
}
