package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;

import static java.util.Map.entry;

/** The keyword tables of rules: each kind of value nft names, once for both directions. */
final class NftKeywords {

    private NftKeywords() {}

    /** {@code fib daddr type}: the kernel's route types (RTN_*). */
    static final KeywordTable ADDRESS_TYPES = KeywordTable.of(w -> "unknown address type '" + w + "'",
            entry("unicast", kernel_h.RTN_UNICAST),
            entry("local", kernel_h.RTN_LOCAL),
            entry("broadcast", kernel_h.RTN_BROADCAST),
            entry("anycast", kernel_h.RTN_ANYCAST),
            entry("multicast", kernel_h.RTN_MULTICAST),
            entry("blackhole", kernel_h.RTN_BLACKHOLE),
            entry("unreachable", kernel_h.RTN_UNREACHABLE),
            entry("prohibit", kernel_h.RTN_PROHIBIT));

    /** {@code ct state}: bits, as the kernel's NF_CT_STATE_BIT(ctinfo) macro makes them. */
    static final KeywordTable CT_STATES = KeywordTable.anyCase(w -> "unknown ct state '" + w
                    + "' (expected invalid, established, related, new or untracked)",
            entry("invalid", kernel_h.NF_CT_STATE_INVALID_BIT),
            entry("established", stateBit(kernel_h.IP_CT_ESTABLISHED)),
            entry("related", stateBit(kernel_h.IP_CT_RELATED)),
            entry("new", stateBit(kernel_h.IP_CT_NEW)),
            entry("untracked", kernel_h.NF_CT_STATE_UNTRACKED_BIT));

    /** {@code ct status}: the kernel's IPS_* bits. */
    static final KeywordTable CT_STATUSES = KeywordTable.anyCase(w -> "unknown ct status '" + w + "'",
            entry("expected", kernel_h.IPS_EXPECTED),
            entry("seen-reply", kernel_h.IPS_SEEN_REPLY),
            entry("assured", kernel_h.IPS_ASSURED),
            entry("confirmed", kernel_h.IPS_CONFIRMED),
            entry("snat", kernel_h.IPS_SRC_NAT),
            entry("dnat", kernel_h.IPS_DST_NAT),
            entry("dying", kernel_h.IPS_DYING));

    /** {@code meta nfproto}. */
    static final KeywordTable NETWORK_PROTOCOLS = KeywordTable.of(w -> "meta nfproto is ipv4 or ipv6, not '" + w + "'",
            entry("ipv4", kernel_h.NFPROTO_IPV4),
            entry("ipv6", kernel_h.NFPROTO_IPV6));

    /** {@code ct direction}. */
    static final KeywordTable CT_DIRECTIONS = KeywordTable.of(w -> "ct direction is original or reply, not '" + w + "'",
            entry("original", kernel_h.IP_CT_DIR_ORIGINAL),
            entry("reply", kernel_h.IP_CT_DIR_REPLY));

    /** {@code meta iiftype}: the one link type nft checks by itself, before an ether field. */
    static final KeywordTable INTERFACE_TYPES = KeywordTable.of(w -> "unknown interface type '" + w + "'",
            entry("ether", kernel_h.ARPHRD_ETHER));

    /** {@code log level}: syslog's levels. */
    static final KeywordTable LOG_LEVELS = KeywordTable.of(w -> "unknown log level '" + w + "'",
            entry("emerg", 0), entry("alert", 1), entry("crit", 2), entry("err", 3),
            entry("warn", 4), entry("notice", 5), entry("info", 6), entry("debug", 7));

    /** The kernel's NF_CT_STATE_BIT(ctinfo) macro. */
    private static int stateBit(int ctinfo) {
        return 1 << (ctinfo % kernel_h.IP_CT_IS_REPLY + 1);
    }
}
