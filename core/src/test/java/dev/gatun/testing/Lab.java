package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.rtnl.Rtnetlink;

import java.net.InetAddress;
import java.util.List;

/**
 * The test network around a host namespace: an "outside" namespace joined to the host by a
 * veth (host 192.0.2.1 and 192.0.2.10, outside 192.0.2.2; 2001:db8::1 and ::2), with a route
 * from outside to the container subnets through the host, so that a test can also try to
 * reach a container directly.
 */
public final class Lab {

    public static final String HOST_ADDRESS = "192.0.2.1";
    public static final String SECOND_HOST_ADDRESS = "192.0.2.10";
    public static final String HOST_ADDRESS6 = "2001:db8::1";

    private Lab() {}

    public static void connectOutside(NetworkNamespace host, NetworkNamespace outside, String... containerSubnets) {
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("gout", null, "eth0", null, outside, null);
            rt.addAddress("gout", Prefix.parse(HOST_ADDRESS + "/24"));
            rt.addAddress("gout", Prefix.parse(SECOND_HOST_ADDRESS + "/24"));
            rt.addAddress("gout", Prefix.parse(HOST_ADDRESS6 + "/64"));
            rt.setUp("gout", true);
            rt.setUp("lo", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(outside)) {
            rt.addAddress("eth0", Prefix.parse("192.0.2.2/24"));
            rt.addAddress("eth0", Prefix.parse("2001:db8::2/64"));
            rt.setUp("eth0", true);
            rt.setUp("lo", true);
            for (String subnet : containerSubnets) {
                Prefix p = Prefix.parse(subnet);
                rt.addRoute(p, InetAddress.ofLiteral(p.isIpv6() ? HOST_ADDRESS6 : HOST_ADDRESS), "eth0");
            }
        }
    }

    public static List<String> lines(String text) {
        return text.lines().toList();
    }
}
