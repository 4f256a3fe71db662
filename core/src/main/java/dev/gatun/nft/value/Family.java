package dev.gatun.nft.value;

import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.kernel_h;
import dev.gatun.internal.Constants;
import dev.gatun.netlink.MalformedReplyException;

/** The nftables table families, with the nft keyword and the kernel's NFPROTO value. */
public enum Family {
    IP("ip", kernel_h.NFPROTO_IPV4),
    IP6("ip6", kernel_h.NFPROTO_IPV6),
    INET("inet", kernel_h.NFPROTO_INET),
    ARP("arp", kernel_h.NFPROTO_ARP),
    BRIDGE("bridge", kernel_h.NFPROTO_BRIDGE),
    NETDEV("netdev", kernel_h.NFPROTO_NETDEV);

    private final String keyword;
    private final int nfproto;

    Family(String keyword, int nfproto) {
        this.keyword = keyword;
        this.nfproto = nfproto;
    }

    /** How nft writes the family, for example "ip6". */
    public String keyword() {
        return keyword;
    }

    /** The kernel's NFPROTO_* number. */
    public int nfproto() {
        return nfproto;
    }

    /** Whether a rule in this family sees both IPv4 and IPv6, so a network-header match needs a protocol check first. */
    public boolean mixesNetworkProtocols() {
        return this == INET || this == BRIDGE || this == NETDEV;
    }

    public static Family parse(String keyword) {
        return Constants.first(values(), f -> f.keyword.equals(keyword))
                .orElseThrow(() -> new InvalidInputException("unknown nftables family '" + keyword
                        + "' (expected one of ip, ip6, inet, arp, bridge, netdev)"));
    }

    public static Family of(int nfproto) {
        return Constants.first(values(), f -> f.nfproto == nfproto)
                .orElseThrow(() -> new MalformedReplyException("NFPROTO " + nfproto + " is no nftables family gatun knows"));
    }

    @Override
    public String toString() {
        return keyword;
    }
}
