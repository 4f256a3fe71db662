package dev.gatun.driver;

import dev.gatun.InvalidInputException;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One owner's ports to containers outside a driver's networks, changed together (see
 * {@link OutsidePorts#changeOutside}): an engine's event (a container started, moved or gone)
 * becomes one transaction instead of one per address and per kind of change.
 *
 * @param label     the network name the returned mappings carry
 * @param owner     whose mappings these are; required
 * @param unpublish per container address, the ports to take away; an empty list takes every
 *                  mapping of the owner to that address
 * @param publish   per container address, the ports to publish; each list non-empty
 * @param check     as for {@link OutsidePorts#publishOutside}
 */
public record OutsideChange(String label, String owner, Map<InetAddress, List<PortSpec>> unpublish,
                            Map<InetAddress, List<PortSpec>> publish, HostPortCheck check) {

    public OutsideChange {
        if (owner == null || owner.isEmpty()) {
            throw new InvalidInputException("a change of ports outside gatun's networks needs an owner");
        }
        if (check == null) {
            throw new InvalidInputException("a change of the ports of " + owner + " needs a host port check");
        }
        unpublish = copy(unpublish);
        publish = copy(publish);
        publish.forEach((ip, ports) -> {
            if (ports.isEmpty()) {
                throw new InvalidInputException("publish to " + ip.getHostAddress() + " for " + owner + ": no ports given");
            }
        });
    }

    /** Whether it asks for nothing. */
    public boolean isEmpty() {
        return unpublish.isEmpty() && publish.isEmpty();
    }

    private static Map<InetAddress, List<PortSpec>> copy(Map<InetAddress, List<PortSpec>> in) {
        Map<InetAddress, List<PortSpec>> out = new LinkedHashMap<>();
        if (in != null) {
            in.forEach((ip, ports) -> out.put(ip, List.copyOf(ports)));
        }
        // Unmodifiable, in the caller's order.
        return java.util.Collections.unmodifiableMap(out);
    }

    /**
     * What one address's part did: {@code published} says which part it is; {@code mappings} what
     * it made or took away, or null when it was {@code refused} (nothing of that part changed).
     */
    public record Outcome(InetAddress containerIp, boolean published, List<PortMapping> mappings, RuntimeException refused) {}
}
