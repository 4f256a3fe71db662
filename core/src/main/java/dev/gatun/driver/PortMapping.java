package dev.gatun.driver;

import java.net.InetAddress;

/**
 * One published port: traffic to {@code hostIp:hostPort} (every local address when hostIp is
 * null) goes to {@code containerIp:containerPort}. {@code owner} is who published it.
 */
public record PortMapping(String network, Protocol protocol, InetAddress hostIp, int hostPort, InetAddress containerIp,
                          int containerPort, String owner) {}
