package dev.gatun.cli.docker;

import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.Sysctls;

import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Chooses a host port for a binding that leaves it to the driver: the lowest port of a range
 * that no mapping of the same protocol holds, where the range is the one asked for or, without
 * one, the host's ip_local_port_range, as Docker's own allocator does.
 */
final class FreePorts {

    private final NetworkDriver driver;

    FreePorts(NetworkDriver driver) {
        this.driver = driver;
    }

    /**
     * The lowest free port of {@code from}-{@code to} ({@code from} 0: the ephemeral range);
     * {@code chosen} holds what this request already took.
     */
    int lowest(Protocol protocol, InetAddress hostIp, int from, int to, Map<InetAddress, List<PortSpec>> chosen) {
        int low = from;
        int high = to;
        if (from == 0) {
            String[] range = new Sysctls(driver.host()).read("ipv4/ip_local_port_range").split("\\s+");
            low = Integer.parseInt(range[0]);
            high = Integer.parseInt(range[1]);
        }
        Set<Integer> taken = new HashSet<>();
        for (PortMapping m : driver.published(null)) {
            if (m.protocol() == protocol && (hostIp == null || m.hostIp() == null || hostIp.equals(m.hostIp()))) {
                taken.add(m.hostPort());
            }
        }
        chosen.values().forEach(specs -> specs.stream().filter(s -> s.protocol() == protocol)
                .forEach(s -> taken.add(s.hostStart())));
        for (int p = low; p <= high; p++) {
            if (!taken.contains(p)) {
                return p;
            }
        }
        throw new ConflictException("no free " + protocol.keyword() + " host port in " + low + "-" + high);
    }
}
