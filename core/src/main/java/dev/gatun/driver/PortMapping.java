package dev.gatun.driver;

import java.net.InetAddress;

/**
 * One published port: traffic to {@code hostIp:hostPort} (every local address when hostIp is
 * null) goes to {@code containerIp:containerPort}. {@code owner} is who published it.
 */
public record PortMapping(String network, Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp,
                          int containerPort, String owner) {

    /** "host:port -> container:port/protocol", with "*" for every address and IPv6 in brackets. */
    public String describe() {
        return endpoint(hostIp, hostPort) + " -> " + endpoint(containerIp, containerPort) + "/" + protocol.keyword();
    }

    private static String endpoint(InetAddress ip, int port) {
        if (ip == null) {
            return "*:" + port;
        }
        String text = dev.gatun.internal.InetText.of(ip);
        return (ip instanceof java.net.Inet4Address ? text : "[" + text + "]") + ":" + port;
    }
}
