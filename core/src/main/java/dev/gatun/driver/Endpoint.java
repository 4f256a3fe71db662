package dev.gatun.driver;

import dev.gatun.rtnl.MacAddress;

import java.net.InetAddress;

/** An attached container: its interface inside, the host end on the bridge, addresses and owner. */
public record Endpoint(String network, String containerNamespace, String ifname, String hostIfname, InetAddress ip,
                       InetAddress ip6, MacAddress mac, String owner) {}
