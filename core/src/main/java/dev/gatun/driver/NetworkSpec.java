package dev.gatun.driver;

import dev.gatun.rtnl.InterfaceNames;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;

/**
 * What to make for a network. {@code subnet6}, {@code bridge}, {@code gateway4},
 * {@code gateway6}, {@code mac} and {@code mtu} may be null for defaults: bridge "gatun-" plus
 * the name when short enough, the first address of each subnet as gateway, a random
 * locally-administered MAC, the kernel's MTU. The driver checks every value when it creates the
 * network.
 */
public record NetworkSpec(String name, String bridge, Prefix subnet4, InetAddress gateway4, Prefix subnet6,
                          InetAddress gateway6, MacAddress mac, Integer mtu, boolean icc, boolean internal,
                          boolean masquerade, boolean counters) {

    /** A network with every default: containers talk to each other, reach out, and are masqueraded. */
    public static NetworkSpec of(String name, Prefix subnet4) {
        return named(name).subnet4(subnet4).build();
    }

    /** The bridge a network named {@code name} gets when its spec names none. */
    public static String defaultBridge(String name) {
        String candidate = "gatun-" + name;
        if (candidate.length() <= InterfaceNames.MAX_BYTES) {
            return candidate;
        }
        return "gatun-" + Integer.toHexString(name.hashCode() & 0x7fffffff);
    }

    /** Starts a spec whose options are named one by one: {@code NetworkSpec.named("n1").subnet4(p).icc(false).build()}. */
    public static Builder named(String name) {
        return new Builder(name);
    }

    /** The options of a network by name; what is not set keeps its default. */
    public static final class Builder {
        private final String name;
        private String bridge;
        private Prefix subnet4;
        private InetAddress gateway4;
        private Prefix subnet6;
        private InetAddress gateway6;
        private MacAddress mac;
        private Integer mtu;
        private boolean icc = true;
        private boolean internal;
        private boolean masquerade = true;
        private boolean counters;

        private Builder(String name) {
            this.name = name;
        }

        public Builder bridge(String bridge) {
            this.bridge = bridge;
            return this;
        }

        public Builder subnet4(Prefix subnet4) {
            this.subnet4 = subnet4;
            return this;
        }

        public Builder gateway4(InetAddress gateway4) {
            this.gateway4 = gateway4;
            return this;
        }

        public Builder subnet6(Prefix subnet6) {
            this.subnet6 = subnet6;
            return this;
        }

        public Builder gateway6(InetAddress gateway6) {
            this.gateway6 = gateway6;
            return this;
        }

        public Builder mac(MacAddress mac) {
            this.mac = mac;
            return this;
        }

        public Builder mtu(Integer mtu) {
            this.mtu = mtu;
            return this;
        }

        /** Whether containers of the network reach each other (default true). */
        public Builder icc(boolean icc) {
            this.icc = icc;
            return this;
        }

        /** Whether the network is cut off from outside (default false). */
        public Builder internal(boolean internal) {
            this.internal = internal;
            return this;
        }

        /** Whether traffic leaving the network is masqueraded (default true). */
        public Builder masquerade(boolean masquerade) {
            this.masquerade = masquerade;
            return this;
        }

        /**
         * Whether each published port counts the packets and bytes sent to it (default false; a
         * counter on each of its map elements, nftables only).
         */
        public Builder counters(boolean counters) {
            this.counters = counters;
            return this;
        }

        public NetworkSpec build() {
            return new NetworkSpec(name, bridge, subnet4, gateway4, subnet6, gateway6, mac, mtu, icc, internal, masquerade,
                    counters);
        }
    }
}
