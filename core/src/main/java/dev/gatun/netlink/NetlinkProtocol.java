package dev.gatun.netlink;

import dev.gatun.bindings.internal.kernel_h;

/** The netlink families gatun speaks. */
public enum NetlinkProtocol {
    /** rtnetlink: links, addresses, routes. */
    ROUTE(kernel_h.NETLINK_ROUTE, "rtnetlink"),
    /** nfnetlink: nf_tables and conntrack. */
    NETFILTER(kernel_h.NETLINK_NETFILTER, "nfnetlink"),
    /** sock_diag: the sockets of a namespace, for example which hold a port. */
    SOCK_DIAG(kernel_h.NETLINK_SOCK_DIAG, "sock_diag");

    final int number;
    final String label;

    NetlinkProtocol(int number, String label) {
        this.number = number;
        this.label = label;
    }
}
