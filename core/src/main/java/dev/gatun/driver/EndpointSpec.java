package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;

import java.net.InetAddress;

/**
 * A container to attach. {@code ip} and {@code ip6} are chosen (lowest free) when null;
 * {@code ifname} defaults to eth0, {@code mac} to 02:42 plus the four bytes of the IPv4
 * address (as Docker does), {@code owner} to the IPv4 address. Without a {@code container} the
 * container end stays in the host namespace for the engine to move (as Docker does). The
 * driver checks every value when it attaches.
 */
public record EndpointSpec(String network, NetworkNamespace container, String ifname, InetAddress ip, InetAddress ip6,
                           MacAddress mac, String owner) {

    public static EndpointSpec of(String network, NetworkNamespace container) {
        return on(network).container(container).build();
    }

    /** Starts a spec whose options are named one by one: {@code EndpointSpec.on("n1").container(c1).owner("web-1").build()}. */
    public static Builder on(String network) {
        return new Builder(network);
    }

    /** The options of an endpoint by name; what is not set keeps its default. */
    public static final class Builder {
        private final String network;
        private NetworkNamespace container;
        private String ifname;
        private InetAddress ip;
        private InetAddress ip6;
        private MacAddress mac;
        private String owner;

        private Builder(String network) {
            this.network = network;
        }

        public Builder container(NetworkNamespace container) {
            this.container = container;
            return this;
        }

        public Builder ifname(String ifname) {
            this.ifname = ifname;
            return this;
        }

        public Builder ip(InetAddress ip) {
            this.ip = ip;
            return this;
        }

        public Builder ip6(InetAddress ip6) {
            this.ip6 = ip6;
            return this;
        }

        public Builder mac(MacAddress mac) {
            this.mac = mac;
            return this;
        }

        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        public EndpointSpec build() {
            return new EndpointSpec(network, container, ifname, ip, ip6, mac, owner);
        }
    }
}
