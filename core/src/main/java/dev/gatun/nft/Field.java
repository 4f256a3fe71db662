package dev.gatun.nft;

import dev.gatun.nft.expr.Ct;
import dev.gatun.nft.expr.Meta;
import dev.gatun.nft.expr.Payload;

/**
 * Packet fields a rule can match, as nft names them, with where they are loaded from, their
 * value type and the protocol match nft puts in front of them (the "dependency").
 */
public enum Field {
    IP_SADDR("ip saddr", Payload.Base.NETWORK, 12, DataType.IPV4_ADDR, Dependency.IPV4),
    IP_DADDR("ip daddr", Payload.Base.NETWORK, 16, DataType.IPV4_ADDR, Dependency.IPV4),
    IP_PROTOCOL("ip protocol", Payload.Base.NETWORK, 9, DataType.INET_PROTO, Dependency.IPV4),
    IP6_SADDR("ip6 saddr", Payload.Base.NETWORK, 8, DataType.IPV6_ADDR, Dependency.IPV6),
    IP6_DADDR("ip6 daddr", Payload.Base.NETWORK, 24, DataType.IPV6_ADDR, Dependency.IPV6),
    IP6_NEXTHDR("ip6 nexthdr", Payload.Base.NETWORK, 6, DataType.INET_PROTO, Dependency.IPV6),
    TCP_SPORT("tcp sport", Payload.Base.TRANSPORT, 0, DataType.INET_SERVICE, Dependency.TCP),
    TCP_DPORT("tcp dport", Payload.Base.TRANSPORT, 2, DataType.INET_SERVICE, Dependency.TCP),
    UDP_SPORT("udp sport", Payload.Base.TRANSPORT, 0, DataType.INET_SERVICE, Dependency.UDP),
    UDP_DPORT("udp dport", Payload.Base.TRANSPORT, 2, DataType.INET_SERVICE, Dependency.UDP),
    SCTP_SPORT("sctp sport", Payload.Base.TRANSPORT, 0, DataType.INET_SERVICE, Dependency.SCTP),
    SCTP_DPORT("sctp dport", Payload.Base.TRANSPORT, 2, DataType.INET_SERVICE, Dependency.SCTP),
    /** The generic transport header: ports at the same place for tcp, udp and sctp. */
    TH_SPORT("th sport", Payload.Base.TRANSPORT, 0, DataType.INET_SERVICE, Dependency.NONE),
    TH_DPORT("th dport", Payload.Base.TRANSPORT, 2, DataType.INET_SERVICE, Dependency.NONE),
    ETHER_SADDR("ether saddr", Payload.Base.LINK, 6, DataType.ETHER_ADDR, Dependency.ETHER),
    ETHER_DADDR("ether daddr", Payload.Base.LINK, 0, DataType.ETHER_ADDR, Dependency.ETHER),
    META_L4PROTO("meta l4proto", Meta.Key.L4PROTO, DataType.INET_PROTO),
    META_NFPROTO("meta nfproto", Meta.Key.NFPROTO, null),
    META_IIFNAME("iifname", Meta.Key.IIFNAME, DataType.IFNAME),
    META_OIFNAME("oifname", Meta.Key.OIFNAME, DataType.IFNAME),
    META_IIF("iif", Meta.Key.IIF, null),
    META_OIF("oif", Meta.Key.OIF, null),
    META_MARK("meta mark", Meta.Key.MARK, DataType.MARK),
    CT_MARK("ct mark", Ct.Key.MARK, DataType.MARK),
    CT_DIRECTION("ct direction", Ct.Key.DIRECTION, null),
    /** Where a connection was first sent (direction 0, original), before any DNAT: a published port's host side. */
    CT_ORIGINAL_IP_DADDR("ct original ip daddr", Ct.Key.DST_IP, 0, DataType.IPV4_ADDR),
    CT_ORIGINAL_IP6_DADDR("ct original ip6 daddr", Ct.Key.DST_IP6, 0, DataType.IPV6_ADDR),
    CT_ORIGINAL_PROTO_DST("ct original proto-dst", Ct.Key.PROTO_DST, 0, DataType.INET_SERVICE);

    /** A protocol match that must precede a field, unless the rule already established it. */
    enum Dependency { NONE, IPV4, IPV6, TCP, UDP, SCTP, ETHER }

    final String words;
    final Payload.Base base;
    final int offset;
    final Meta.Key meta;
    final Ct.Key ct;
    /** The conntrack direction a ct field is read in (0 original), or null for the packet's own. */
    final Integer ctDirection;
    final DataType type;
    final Dependency dependency;

    Field(String words, Payload.Base base, int offset, DataType type, Dependency dependency) {
        this.words = words;
        this.base = base;
        this.offset = offset;
        this.meta = null;
        this.ct = null;
        this.ctDirection = null;
        this.type = type;
        this.dependency = dependency;
    }

    Field(String words, Meta.Key meta, DataType type) {
        this.words = words;
        this.base = null;
        this.offset = 0;
        this.meta = meta;
        this.ct = null;
        this.ctDirection = null;
        this.type = type;
        this.dependency = Dependency.NONE;
    }

    Field(String words, Ct.Key ct, DataType type) {
        this(words, ct, null, type);
    }

    Field(String words, Ct.Key ct, Integer direction, DataType type) {
        this.words = words;
        this.base = null;
        this.offset = 0;
        this.meta = null;
        this.ct = ct;
        this.ctDirection = direction;
        this.type = type;
        this.dependency = Dependency.NONE;
    }

    /** nft's words for the field, for example "tcp dport". */
    public String words() {
        return words;
    }

    /** Bytes the field occupies in a register. */
    int length() {
        if (this == META_NFPROTO || this == CT_DIRECTION) {
            return 1;
        }
        if (this == META_IIF || this == META_OIF) {
            return 4;
        }
        return type.length;
    }

    boolean isPayload() {
        return base != null;
    }
}
