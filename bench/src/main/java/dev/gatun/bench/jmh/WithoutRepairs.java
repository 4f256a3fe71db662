package dev.gatun.bench.jmh;

import dev.gatun.driver.Replacement;
import dev.gatun.driver.AdoptedBridge;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.LocalnetRoute;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortListener;
import dev.gatun.driver.OutsideChange;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.RulesetEvent;

import java.time.Duration;
import java.net.InetAddress;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A driver whose repairs do nothing: under {@link dev.gatun.driver.SelfHealingDriver} it
 * measures serve without the repairs its healer makes after each of its own unpublishes.
 */
record WithoutRepairs(GatunDriver inner) implements GatunDriver {

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairOwnRuleset(List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairOtherFirewalls() {
        return List.of();
    }

    @Override
    public boolean otherFirewallsNeedPolling() {
        return inner.otherFirewallsNeedPolling();
    }

    @Override
    public List<ForeignDrop> foreignDrops() {
        return inner.foreignDrops();
    }

    @Override
    public List<LocalnetRoute> localnetRoutes() {
        return inner.localnetRoutes();
    }

    @Override
    public List<String> verify(Endpoint endpoint, NetworkNamespace container) {
        return inner.verify(endpoint, container);
    }

    @Override
    public List<PortMapping> publishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner,
                                            HostPortCheck check) {
        return inner.publishOutside(label, containerIp, ports, owner, check);
    }

    @Override
    public List<PortMapping> unpublishOutside(String label, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return inner.unpublishOutside(label, containerIp, ports, owner);
    }

    @Override
    public List<PortMapping> publishAll(String network, Map<InetAddress, List<PortSpec>> ports, String owner,
                                        HostPortCheck check) {
        return inner.publishAll(network, ports, owner, check);
    }

    @Override
    public List<OutsideChange.Outcome> changeOutside(OutsideChange change) {
        return inner.changeOutside(change);
    }

    @Override
    public List<PortMapping> publishedOutside() {
        return inner.publishedOutside();
    }

    @Override
    public List<PortMapping> allPublished() {
        return inner.allPublished();
    }

    @Override
    public List<PortTraffic> allTraffic() {
        return inner.allTraffic();
    }

    @Override
    public List<String> hostPortsInUse() {
        return inner.hostPortsInUse();
    }

    @Override
    public void adoptBridge(AdoptedBridge bridge) {
        inner.adoptBridge(bridge);
    }

    @Override
    public void releaseBridge(AdoptedBridge bridge) {
        inner.releaseBridge(bridge);
    }

    @Override
    public List<AdoptedBridge> adoptedBridges() {
        return inner.adoptedBridges();
    }

    @Override
    public NetworkNamespace host() {
        return inner.host();
    }

    @Override
    public Network createNetwork(NetworkSpec spec) {
        return inner.createNetwork(spec);
    }

    @Override
    public Network createNetworkForPublish(NetworkSpec spec) {
        return inner.createNetworkForPublish(spec);
    }

    @Override
    public void completeNetwork(String name) {
        inner.completeNetwork(name);
    }

    @Override
    public void deleteNetwork(String name, boolean force) {
        inner.deleteNetwork(name, force);
    }

    @Override
    public List<Network> networks() {
        return inner.networks();
    }

    @Override
    public Network network(String name) {
        return inner.network(name);
    }

    @Override
    public Endpoint attach(EndpointSpec spec) {
        return inner.attach(spec);
    }

    @Override
    public void detachOwner(String network, String owner) {
        inner.detachOwner(network, owner);
    }

    @Override
    public void detach(String network, NetworkNamespace container, String ifname) {
        inner.detach(network, container, ifname);
    }

    @Override
    public List<Endpoint> endpoints(String network) {
        return inner.endpoints(network);
    }

    @Override
    public List<PortMapping> publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                                     HostPortCheck check) {
        return inner.publish(network, containerIp, ports, owner, check);
    }

    @Override
    public int drain(List<PortMapping> mappings, Duration timeout) {
        return inner.drain(mappings, timeout);
    }

    @Override
    public Replacement replace(String network, InetAddress containerIp, List<PortSpec> ports, String owner,
                               HostPortCheck check, boolean keepUdpFlows) {
        return inner.replace(network, containerIp, ports, owner, check, keepUdpFlows);
    }

    @Override
    public List<PortMapping> unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {
        return inner.unpublish(network, containerIp, ports, owner);
    }

    @Override
    public void listen(PortListener listener) {
        inner.listen(listener);
    }

    @Override
    public Consumer<RulesetEvent> followRuleset() {
        return inner.followRuleset();
    }

    @Override
    public List<PortMapping> published(String network) {
        return inner.published(network);
    }

    @Override
    public List<PortTraffic> traffic(String network) {
        return inner.traffic(network);
    }

    @Override
    public void close() {
        inner.close();
    }
}
