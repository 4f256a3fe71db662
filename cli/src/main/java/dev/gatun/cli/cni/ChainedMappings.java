package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.OutsidePorts;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * gatun chained after another plugin, in portmap's place: only the port mappings, to the
 * container addresses of CNI_IFNAME in the prevResult, owned by {@code CONTAINERID/IFNAME@NETWORK}
 * (they are on no network of gatun's, so the owner says which CNI network GC collects them for).
 */
final class ChainedMappings {

    private final CniCall call;

    ChainedMappings(CniCall call) {
        this.call = call;
    }

    JsonNode add() {
        List<InetAddress> ips = addresses();
        if (!call.config().portMappings().isEmpty() && ips.isEmpty()) {
            throw CniConfig.invalid("prevResult has no address of interface " + call.env().ifname()
                    + " to publish ports to");
        }
        if (!call.config().portMappings().isEmpty()) {
            call.drivers().with((OutsidePorts d) -> {
                for (InetAddress ip : ips) {
                    List<PortSpec> ports = call.specs(ip);
                    if (!ports.isEmpty()) {
                        d.publishOutside(new PortRequest(call.config().name(), ip, ports, call.chainedOwner()), HostPortCheck.SKIP);
                    }
                }
                return null;
            });
            call.log("ADD " + call.chainedOwner() + ": " + call.config().portMappings().size() + " port mapping(s) to "
                    + ips);
        }
        // A chained plugin that adds no interface passes the result on.
        return CniResults.converted(call.config().prevResult(), call.config().cniVersion());
    }

    /** Removes every mapping of this attachment; how many went. */
    int del(OutsidePorts d) {
        int removed = 0;
        for (InetAddress ip : CniCall.containerIps(d.publishedOutside(), call.chainedOwner())) {
            removed += d.unpublishOutside(new PortRequest(call.config().name(), ip, List.of(), call.chainedOwner())).size();
        }
        return removed;
    }

    /** What of the attachment's mappings is missing, each named. */
    List<String> check(OutsidePorts d) {
        return call.missingMappings(addresses(), d.publishedOutside(), call.chainedOwner());
    }

    private List<InetAddress> addresses() {
        return CniResults.containerAddresses(call.config().prevResult(), call.env().ifname()).stream()
                .map(a -> a.prefix().address()).toList();
    }

    /** Removes the mappings of chained attachments of this network that are not in {@code valid}; their owners. */
    static List<String> collect(CniCall call, OutsidePorts d, Set<String> valid) {
        String network = "@" + call.config().name();
        List<String> gone = new ArrayList<>();
        for (PortMapping m : d.publishedOutside()) {
            String owner = m.owner();
            if (CniCall.isCniOwner(owner) && owner.endsWith(network)
                    && !valid.contains(owner.substring(0, owner.length() - network.length()))) {
                d.unpublishOutside(new PortRequest(call.config().name(), m.containerIp(), List.of(), owner));
                gone.add(owner);
            }
        }
        return gone;
    }
}
