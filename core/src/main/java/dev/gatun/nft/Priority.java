package dev.gatun.nft;

import dev.gatun.bindings.internal.kernel_h;

/** The standard priorities nft knows by name, for the ip, ip6 and inet families. */
public final class Priority {

    public static final int RAW = kernel_h.NF_IP_PRI_RAW;
    public static final int MANGLE = kernel_h.NF_IP_PRI_MANGLE;
    public static final int DSTNAT = kernel_h.NF_IP_PRI_NAT_DST;
    public static final int FILTER = kernel_h.NF_IP_PRI_FILTER;
    public static final int SECURITY = kernel_h.NF_IP_PRI_SECURITY;
    public static final int SRCNAT = kernel_h.NF_IP_PRI_NAT_SRC;

    private Priority() {}
}
