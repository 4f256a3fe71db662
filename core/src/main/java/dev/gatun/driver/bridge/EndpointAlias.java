package dev.gatun.driver.bridge;

import dev.gatun.InvalidInputException;
import dev.gatun.driver.Endpoint;
import dev.gatun.InetText;
import dev.gatun.rtnl.MacAddress;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What gatun keeps about an endpoint in the alias of its host end: "gatun-endpoint network=n1
 * nsino=4026532 ifname=eth0 ip=10.88.0.2 mac=... owner=web-1 ns=c1". {@code namespaceInode} is
 * null for an interface handed over to the caller (no container namespace);
 * {@code namespace}, the container's namespace as named or as a path, is null when unknown or
 * when it did not fit (see {@link #fitting}).
 */
record EndpointAlias(String network, Long namespaceInode, String ifname, InetAddress ip, InetAddress ip6,
                     MacAddress mac, String owner, String namespace) {

    static final String KIND = "gatun-endpoint";

    /** The alias text; refused when it would not fit in the kernel's 255 bytes. */
    String encode() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("network", network);
        fields.put("nsino", namespaceInode == null ? null : Long.toString(namespaceInode));
        fields.put("ifname", ifname);
        fields.put("ip", InetText.of(ip));
        fields.put("ip6", ip6 == null ? null : InetText.of(ip6));
        fields.put("mac", mac.toString());
        fields.put("owner", owner);
        fields.put("ns", namespace);
        return AliasFields.encode(KIND, fields, "the endpoint of owner " + owner + " on network " + network);
    }

    /**
     * This alias, or when it would not fit, this without the namespace's name (a long path):
     * the inode still finds the endpoint.
     */
    EndpointAlias fitting() {
        try {
            encode();
            return this;
        } catch (InvalidInputException tooLong) {
            return new EndpointAlias(network, namespaceInode, ifname, ip, ip6, mac, owner, null);
        }
    }

    /**
     * The endpoint an alias describes; empty when it is not an endpoint's alias of gatun's, a
     * {@link MalformedAliasException} when it claims to be one but cannot be read.
     */
    static Optional<EndpointAlias> decode(String alias) {
        return AliasFields.decode(KIND, alias).map(f -> new EndpointAlias(f.text("network"), f.number("nsino"),
                f.text("ifname"), f.address("ip", false, true), f.address("ip6", true, false), f.mac("mac"),
                f.text("owner"), f.optional("ns")));
    }

    /** Whether this is the endpoint {@code ifname} in the namespace of inode {@code inode}. */
    boolean isIn(long inode, String ifname) {
        return namespaceInode != null && namespaceInode == inode && this.ifname.equals(ifname);
    }

    /** The endpoint whose host end is {@code hostIfname}, the link this alias was read from. */
    Endpoint endpoint(String hostIfname) {
        String container = namespace != null ? namespace : namespaceInode != null ? "inode " + namespaceInode : null;
        return new Endpoint(network, container, ifname, hostIfname, ip, ip6, mac, owner);
    }
}
