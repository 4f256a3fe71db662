package dev.gatun.cli.service;

import dev.gatun.driver.Endpoint;
import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.Replacement;
import dev.gatun.driver.PortRequest;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.NftRenderer;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Table;
import dev.gatun.netns.NetworkNamespace;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Every operation the CLI and the local API serve, each a typed request in and a typed result
 * out; a failure is an exception whose {@link dev.gatun.cli.Failure class} each adapter maps
 * once, in its own terms. The adapters only translate: picocli's options and the API's JSON
 * fields into requests, results into lines or documents.
 */
public final class GatunService {

    private final Supplier<NetworkNamespace> host;
    private final Drivers drivers;
    private final boolean inServe;

    /** Works on the namespace {@code host} names, with drivers {@code drivers} lends, in a process of its own. */
    public GatunService(Supplier<NetworkNamespace> host, Drivers drivers) {
        this(host, drivers, false);
    }

    /** {@link #GatunService(Supplier, Drivers)}; {@code inServe}: run by the namespace's gatun serve. */
    public GatunService(Supplier<NetworkNamespace> host, Drivers drivers, boolean inServe) {
        this.host = host;
        this.drivers = drivers;
        this.inServe = inServe;
    }

    public Network createNetwork(CreateNetwork r) {
        return drivers.with(d -> d.createNetwork(r.spec()));
    }

    public void deleteNetwork(DeleteNetwork r) {
        drivers.with(d -> {
            d.deleteNetwork(r.name(), r.force());
            return null;
        });
    }

    public List<Network> networks() {
        return drivers.with(d -> d.networks());
    }

    public Endpoint attach(Attach r) {
        return drivers.with(d -> d.attach(r.spec()));
    }

    public void detach(Detach r) {
        drivers.with(d -> {
            d.detach(r.network(), r.container(), r.ifname());
            return null;
        });
    }

    public List<PortMapping> publish(Publish r) {
        return drivers.with(d -> d.publish(new PortRequest(r.network(), r.containerIp(), r.ports(), r.owner()), r.check()));
    }

    public List<PortMapping> unpublish(Unpublish r) {
        return drivers.with(d -> d.unpublish(new PortRequest(r.network(), r.containerIp(), r.ports(), r.owner())));
    }

    public Replacement replace(ReplacePorts r) {
        Publish p = r.publish();
        return drivers.with(d -> d.replace(new PortRequest(p.network(), p.containerIp(), p.ports(), p.owner()), p.check(),
                r.keepUdpFlows()));
    }

    /** Unpublishes, then waits up to {@code timeout} for the established connections through what it removed to end. */
    public Drained unpublishAndDrain(Unpublish r, Duration timeout) {
        return drivers.with(d -> {
            List<PortMapping> removed = d.unpublish(new PortRequest(r.network(), r.containerIp(), r.ports(), r.owner()));
            return new Drained(removed, d.drain(removed, timeout));
        });
    }

    public List<PortMapping> ports(ListPorts r) {
        return drivers.with(d -> r.network() == null ? d.allPublished() : d.published(r.network()));
    }

    /** {@link #ports} with each mapping's counts (null where its network has no counters). */
    public List<PortTraffic> traffic(ListPorts r) {
        return drivers.with(d -> r.network() == null ? d.allTraffic() : d.traffic(r.network()));
    }

    /** gatun's table in nft syntax, read back over netlink and rendered by gatun. */
    public String ruleset() {
        try (Nftables nft = Nftables.open(host.get())) {
            return NftRenderer.render(nft.list(Table.of(Family.INET, "gatun")));
        }
    }

    public DoctorReport doctor() {
        return new Doctor(host, drivers, inServe).run();
    }
}
