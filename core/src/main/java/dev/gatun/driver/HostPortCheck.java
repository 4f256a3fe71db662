package dev.gatun.driver;

/**
 * Whether a publish first asks the kernel (sock_diag) if a socket of the host namespace holds
 * the host port: a TCP socket listening on it, or a UDP socket bound to it, on that address, the
 * wildcard, or the IPv6 wildcard (which receives IPv4 too unless IPV6_V6ONLY). The DNAT of a
 * published port would silently take such a service's traffic, so by default the publish is
 * refused instead ({@link ConflictException}, naming the port and, when the kernel tells, the
 * process). SCTP ports are not checked.
 */
public enum HostPortCheck {
    /** Refuse a host port that a socket of the host holds (the default). */
    CHECK,
    /**
     * Publish without asking: for a caller that reserves the port itself before publishing, as
     * container runtimes do before a CNI ADD (rootful Podman binds and holds every published port
     * through conmon), where the check would refuse the runtime's own reservation.
     */
    SKIP
}
