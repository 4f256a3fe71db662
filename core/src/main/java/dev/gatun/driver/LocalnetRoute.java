package dev.gatun.driver;

/**
 * An interface of the host that routes 127.0.0.0/8 ({@code net.ipv4.conf.IFNAME.route_localnet}
 * is 1; {@code all} stands for every interface), why, and whether gatun's drop of packets to
 * 127.0.0.0/8 that did not arrive on {@code lo} guards it. Without that drop such an interface is
 * a door: a neighbour on it reaches the host's loopback-only services (CVE-2020-8558).
 *
 * @param ifname   the interface, or {@code all}
 * @param openedBy what of gatun's turned it on ("gatun network n1", ...), or null when gatun did not
 * @param guarded  whether gatun's drop is in place (in its table, or its iptables chain)
 */
public record LocalnetRoute(String ifname, String openedBy, boolean guarded) {

    /** One line for people. */
    public String describe() {
        String why = openedBy == null ? "on, not by gatun" : "on for " + openedBy;
        return why + (guarded ? "; gatun's drop of 127.0.0.0/8 from anywhere but lo guards it"
                : openedBy == null ? "; gatun's drop is not in place (no network of gatun's here)"
                : "; gatun's drop is NOT in place: a neighbour on it reaches the host's loopback services"
                        + " (gatun serve or the next network made puts it back)");
    }
}
