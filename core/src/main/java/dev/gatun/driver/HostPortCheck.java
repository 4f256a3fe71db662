package dev.gatun.driver;

import dev.gatun.InvalidInputException;

import java.util.Set;

/**
 * Whether a publish first asks the kernel (sock_diag) if a socket of the host namespace holds
 * the host port: a TCP socket listening on it, or a UDP socket bound to it, on that address, the
 * wildcard, or the IPv6 wildcard (which receives IPv4 too unless IPV6_V6ONLY). The DNAT of a
 * published port would silently take such a service's traffic, so by default the publish is
 * refused instead ({@link ConflictException}, naming the port and, when the kernel tells, the
 * process). SCTP ports are not checked.
 *
 * @param asks        whether the host's sockets are asked at all
 * @param engineNames processes (by their name in /proc/PID/comm) whose socket on the port is the
 *                    engine's own reservation of it, published over rather than refused; any
 *                    other holder is still refused
 */
public record HostPortCheck(boolean asks, Set<String> engineNames) {

    /** Refuse a host port that a socket of the host holds (the default). */
    public static final HostPortCheck CHECK = new HostPortCheck(true, Set.of());

    /**
     * Publish without asking: for a caller that reserves the port itself before publishing, as
     * container runtimes do before a CNI ADD (rootful Podman binds and holds every published port
     * through conmon), where the check would refuse the runtime's own reservation.
     */
    public static final HostPortCheck SKIP = new HostPortCheck(false, Set.of());

    public HostPortCheck {
        engineNames = Set.copyOf(engineNames);
        if (!asks && !engineNames.isEmpty()) {
            throw new InvalidInputException("a host port check that does not ask cannot name engine processes "
                    + engineNames);
        }
        for (String name : engineNames) {
            // The kernel keeps 15 bytes of a command's name: a longer one would never match.
            if (name.isEmpty() || name.length() > 15 || name.indexOf('/') >= 0) {
                throw new InvalidInputException("'" + name + "' is not a process name as /proc/PID/comm gives it"
                        + " (1 to 15 characters, no '/')");
            }
        }
    }

    /**
     * Asks, and takes a socket that one of {@code engineNames} holds as the engine's reservation
     * of the port it recorded (dockerd and docker-proxy hold what {@code docker run -p} binds).
     */
    public static HostPortCheck exceptHeldBy(String... engineNames) {
        return new HostPortCheck(true, Set.of(engineNames));
    }
}
