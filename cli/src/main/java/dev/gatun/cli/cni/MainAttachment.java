package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.ErrnoException;
import dev.gatun.InetText;
import dev.gatun.cli.cni.CniResults.Address;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.ContainerSetup;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.PortRequest;
import dev.gatun.Rollback;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * gatun as the main plugin, in place of bridge + portmap + firewall: addresses from the IPAM
 * plugin, run as {@code bridge} runs it; gatun's network named as the CNI network (made at the
 * first ADD with the IPAM subnet and gateway), a veth into CNI_NETNS, and the ports of
 * {@code runtimeConfig.portMappings}, all owned by {@code CONTAINERID/IFNAME}.
 */
final class MainAttachment {

    private final CniCall call;

    MainAttachment(CniCall call) {
        this.call = call;
    }

    private CniConfig config() {
        return call.config();
    }

    JsonNode add() {
        CniConfig config = config();
        if (config.ipamType() == null) {
            throw CniConfig.invalid("gatun as the main plugin needs an ipam section (for example {\"type\": "
                    + "\"host-local\", ...}); chained after another plugin it needs that plugin's prevResult");
        }
        var container = call.namespace();
        // Each step undone, newest first, when a later one fails: nothing of a failed ADD stays.
        // The address is asked for before a driver is borrowed, and given back after it is returned.
        Rollback address = new Rollback();
        try {
            ObjectNode ipam = Ipam.exec(config.ipamType(), "ADD", call.env(), config.raw());
            address.onFailure(this::releaseAddress);
            if (ipam == null) {
                throw new CniError(CniError.IO_FAILURE, "IPAM plugin " + config.ipamType() + " answered ADD with nothing");
            }
            List<Address> ips = CniResults.addresses(ipam, "the result of IPAM plugin " + config.ipamType());
            Address v4 = ips.stream().filter(a -> !a.prefix().isIpv6()).findFirst().orElseThrow(() -> CniConfig.invalid(
                    "IPAM plugin " + config.ipamType() + " gave no IPv4 address; gatun's networks need one"));
            Address v6 = ips.stream().filter(a -> a.prefix().isIpv6()).findFirst().orElse(null);
            return call.drivers().with((ContainerSetup d) -> {
                Rollback attached = new Rollback();
                try {
                    Map<InetAddress, List<PortSpec>> ports = new LinkedHashMap<>();
                    for (Address a : v6 == null ? List.of(v4) : List.of(v4, v6)) {
                        ports.put(a.prefix().address(), call.specs(a.prefix().address()));
                    }
                    boolean anyPorts = ports.values().stream().anyMatch(p -> !p.isEmpty());
                    Network n = network(d, v4, v6, anyPorts, attached);
                    if (!anyPorts) {
                        // No ports to carry its entries: an ADD that made it for its own may have died before them.
                        d.completeNetwork(n.name());
                    }
                    // A container id is used once; what an earlier ADD left under it (a DEL that never came) goes.
                    if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(call.owner()))) {
                        d.detachOwner(n.name(), call.owner());
                    }
                    Endpoint e = d.attach(EndpointSpec.on(n.name()).container(container).ifname(call.env().ifname())
                            .ip(v4.prefix().address()).ip6(v6 == null ? null : v6.prefix().address())
                            .owner(call.owner()).build());
                    attached.onFailure(() -> d.detachOwner(n.name(), call.owner()));
                    if (anyPorts) {
                        // Both families in one transaction. Not asking the host's sockets: the runtime holds the
                        // ports itself before ADD (rootful Podman binds every published port through conmon), as
                        // portmap leaves it.
                        d.publishAll(new PortsByAddress(n.name(), ports, call.owner()), HostPortCheck.SKIP);
                    }
                    call.log("ADD " + call.owner() + ": " + InetText.of(e.ip()) + " on " + n.name() + " ("
                            + e.hostIfname() + "), " + config.portMappings().size() + " port mapping(s)");
                    return result(ipam, n, e);
                } catch (RuntimeException x) {
                    throw attached.undo(x);
                }
            });
        } catch (RuntimeException x) {
            throw address.undo(x);
        }
    }

    /** Gives the address back to IPAM after a failed ADD; a failure of that is said, the ADD's own failure kept. */
    private void releaseAddress() {
        try {
            Ipam.exec(config().ipamType(), "DEL", call.env(), config().raw());
        } catch (RuntimeException e) {
            call.log("releasing the address after a failed ADD failed too: " + e.getMessage());
        }
    }

    /**
     * gatun's network of this CNI network: made at the first ADD, from the IPAM result. Made for
     * the {@code ports} to follow, its packet-filter entries go in with them, or by {@code failed}
     * should the ADD fail first.
     */
    private Network network(ContainerSetup d, Address v4, Address v6, boolean ports, Rollback failed) {
        CniConfig config = config();
        RuntimeException last = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            Network n = find(d);
            if (n == null) {
                try {
                    NetworkSpec spec = NetworkSpec.named(config.name()).bridge(config.bridge())
                            .subnet4(v4.prefix().network()).gateway4(v4.gateway())
                            .subnet6(v6 == null ? null : v6.prefix().network()).gateway6(v6 == null ? null : v6.gateway())
                            .mtu(config.mtu()).icc(config.icc()).internal(config.internal()).masquerade(config.ipMasq())
                            .counters(config.counters()).build();
                    n = ports ? d.createNetworkForPublish(spec) : d.createNetwork(spec);
                    if (ports) {
                        failed.onFailure(() -> d.completeNetwork(config.name()));
                    }
                    call.log("created network " + n.name() + " (bridge " + n.bridge() + ", " + n.subnets() + ")");
                } catch (ConflictException | ErrnoException e) {
                    // Another ADD (another process) may be making it right now: read again.
                    last = e;
                    sleep(25L * (attempt + 1));
                    continue;
                }
            }
            if (n.subnets().stream().noneMatch(p -> p.contains(v4.prefix().address()))) {
                throw CniConfig.invalid("network " + n.name() + " exists with subnets " + n.subnets() + ", but IPAM gave "
                        + v4.prefix() + "; remove it (gatun net rm " + n.name() + ") or change the ipam section");
            }
            if (config.bridge() != null && !config.bridge().equals(n.bridge())) {
                throw CniConfig.invalid("network " + n.name() + " exists with bridge " + n.bridge() + ", not "
                        + config.bridge());
            }
            return n;
        }
        throw last;
    }

    /** gatun's network of this CNI network, or null before its first ADD. */
    Network find(ContainerSetup d) {
        return d.networks().stream().filter(n -> n.name().equals(config().name())).findFirst().orElse(null);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The main plugin's result: the bridge, the host end, the container end, the IPAM addresses on it. */
    private ObjectNode result(ObjectNode ipam, Network n, Endpoint e) {
        ObjectNode r = CniConfig.JSON.createObjectNode();
        ArrayNode interfaces = r.putArray("interfaces");
        interfaces.addObject().put("name", n.bridge()).put("mac", n.mac().toString());
        interfaces.addObject().put("name", e.hostIfname());
        interfaces.addObject().put("name", e.ifname()).put("mac", e.mac().toString()).put("sandbox", call.env().netns());
        ArrayNode ips = r.putArray("ips");
        for (JsonNode ip : ipam.path("ips")) {
            ObjectNode copy = ((ObjectNode) ip).deepCopy();
            copy.put("interface", 2);
            ips.add(copy);
        }
        ArrayNode routes = r.putArray("routes");
        ipam.path("routes").forEach(routes::add);
        if (config().isDefaultGateway() && !config().internal()) {
            for (InetAddress gw : n.gateways()) {
                String any = gw instanceof Inet4Address ? "0.0.0.0/0" : "::/0";
                boolean present = false;
                for (JsonNode route : routes) {
                    present |= any.equals(route.path("dst").asText());
                }
                if (!present) {
                    routes.addObject().put("dst", any).put("gw", InetText.of(gw));
                }
            }
        }
        if (ipam.has("dns")) {
            r.set("dns", ipam.get("dns"));
        }
        return CniResults.converted(r, config().cniVersion());
    }

    /** Removes the attachment's veth and mappings, if there; how many things went. */
    int del(ContainerSetup d) {
        int removed = 0;
        Network n = find(d);
        if (n != null) {
            if (d.endpoints(n.name()).stream().anyMatch(e -> e.owner().equals(call.owner()))) {
                d.detachOwner(n.name(), call.owner());
                removed++;
            }
            for (InetAddress ip : CniCall.containerIps(d.published(n.name()), call.owner())) {
                removed += d.unpublish(new PortRequest(n.name(), ip, List.of(), call.owner())).size();
            }
        }
        return removed;
    }

    /** What of the attachment is missing (network, veth, addresses, mappings), each named. */
    List<String> check(ContainerSetup d) {
        List<InetAddress> addresses = CniResults.containerAddresses(config().prevResult(), call.env().ifname()).stream()
                .map(a -> a.prefix().address()).toList();
        List<String> out = new ArrayList<>();
        String who = call.owner();
        Network n = find(d);
        if (n == null) {
            out.add("network " + config().name() + " (its bridge and firewall entries)");
            return out;
        }
        Endpoint e = d.endpoints(n.name()).stream().filter(x -> x.owner().equals(who)).findFirst().orElse(null);
        if (e == null) {
            out.add("the veth of " + who + " on bridge " + n.bridge());
        } else {
            for (InetAddress ip : addresses) {
                if (!ip.equals(e.ip()) && !ip.equals(e.ip6())) {
                    out.add("address " + InetText.of(ip) + " on " + e.ifname() + " (the veth has " + InetText.of(e.ip())
                            + ")");
                }
            }
            out.addAll(d.verify(e, call.namespace()));
        }
        out.addAll(call.missingMappings(addresses, d.published(n.name()), who));
        return out;
    }

    /** Removes what attachments of this network that are not in {@code valid} left; their owners. */
    List<String> collect(ContainerSetup d, Set<String> valid) {
        List<String> gone = new ArrayList<>();
        Network n = find(d);
        if (n == null) {
            return gone;
        }
        Set<String> owners = new LinkedHashSet<>();
        d.endpoints(n.name()).forEach(e -> owners.add(e.owner()));
        for (String owner : owners) {
            if (CniCall.isCniOwner(owner) && !owner.contains("@") && !valid.contains(owner)) {
                d.detachOwner(n.name(), owner);
                gone.add(owner);
            }
        }
        for (PortMapping m : d.published(n.name())) {
            if (CniCall.isCniOwner(m.owner()) && !m.owner().contains("@") && !valid.contains(m.owner())) {
                d.unpublish(new PortRequest(n.name(), m.containerIp(), List.of(), m.owner()));
                gone.add(m.owner());
            }
        }
        return gone;
    }
}
