package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.InetText;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * A socket of a namespace that holds a local port, as sock_diag tells it: a TCP socket that
 * listens, or a UDP socket bound to the port.
 *
 * @param ipv6      whether it is an IPv6 socket (AF_INET6); its address may still be an IPv4 one,
 *                  when it is bound to an IPv4-mapped address ({@code ::ffff:a.b.c.d})
 * @param protocol  IPPROTO_TCP or IPPROTO_UDP
 * @param address   the local address: a wildcard (0.0.0.0 or ::) for every address
 * @param port      the local port
 * @param v6only    for an IPv6 socket, whether IPV6_V6ONLY keeps it from IPv4 traffic
 * @param uid       the socket's owner
 * @param inode     the socket's inode, which names it in /proc/PID/fd as {@code socket:[inode]}
 */
public record BoundSocket(boolean ipv6, int protocol, InetAddress address, int port, boolean v6only, int uid,
                          long inode) {

    /**
     * Whether this socket would get traffic to {@code port} of {@code hostIp} (null: any local
     * address) of one family, so that a DNAT of that port would take it away: an IPv4 socket on
     * that address or the wildcard, an IPv6 wildcard socket without IPV6_V6ONLY, which receives
     * IPv4 too, or any socket of the family when every address is meant.
     */
    public boolean holds(boolean ipv4, InetAddress hostIp) {
        boolean v4Address = address instanceof Inet4Address;
        if (ipv4) {
            if (!v4Address) {
                return address.isAnyLocalAddress() && !v6only;
            }
        } else if (!ipv6 || v4Address) {
            return false;
        }
        return hostIp == null || address.isAnyLocalAddress() || address.equals(hostIp);
    }

    /** "python3 (pid 4711) listens on [::]:8080/tcp": with the process when one is named, else the socket's inode. */
    public String describe(String process) {
        String who = process != null ? process : "a socket (inode " + inode + ", uid " + uid + ")";
        return who + (protocol == libc_h.IPPROTO_TCP ? " listens on " : " is bound to ") + endpoint()
                + (protocol == libc_h.IPPROTO_TCP ? "/tcp" : "/udp");
    }

    /** "0.0.0.0:8080", "[::]:8080". */
    public String endpoint() {
        String text = InetText.of(address);
        return (address instanceof Inet4Address ? text : "[" + text + "]") + ":" + port;
    }
}
