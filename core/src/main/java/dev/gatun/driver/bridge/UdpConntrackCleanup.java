package dev.gatun.driver.bridge;

import dev.gatun.conntrack.Conntrack;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;

import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.List;

/**
 * After a commit, deletes the conntrack entries of the UDP mappings it moved or removed. UDP
 * only: a UDP client keeps its source port, so its old entry would keep it on the old container,
 * while a new TCP connection gets a new entry anyway. Finding entries walks the host's whole
 * conntrack table (milliseconds, over 1000x a publish), so it is done once per commit, and not
 * for every TCP change (Docker also clears UDP entries only).
 */
final class UdpConntrackCleanup {

    private static final System.Logger LOG = System.getLogger("dev.gatun");

    private final Conntrack conntrack;
    private final String hostName;

    UdpConntrackCleanup(Conntrack conntrack, String hostName) {
        this.conntrack = conntrack;
        this.hostName = hostName;
    }

    void after(List<PortMapping> changed) {
        List<Conntrack.NattedPort> gone = new ArrayList<>();
        for (PortMapping m : changed) {
            if (m.protocol() == Protocol.UDP) {
                gone.add(new Conntrack.NattedPort(!(m.containerIp() instanceof Inet4Address), m.protocol().number(),
                        m.hostIp(), m.hostPort()));
            }
        }
        try {
            conntrack.deleteNatted(gone);
        } catch (RuntimeException e) {
            // The maps changed: the callers get their results, not an error that would make
            // them think nothing did (and retry into "already published").
            LOG.log(System.Logger.Level.WARNING, "ports changed in " + hostName + ", but the old conntrack "
                    + "entries of their UDP mappings could not be deleted (" + e.getMessage() + "): a UDP client "
                    + "may reach the old container until its entry expires");
        }
    }
}
