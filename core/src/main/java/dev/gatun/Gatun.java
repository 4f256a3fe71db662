package dev.gatun;

import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.netns.NetworkNamespace;

/**
 * The entry point for an embedding program: a driver for one host namespace.
 *
 * <pre>{@code
 * try (NetworkDriver gatun = Gatun.open(NetworkNamespace.current())) {
 *     gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
 *     Endpoint e = gatun.attach(EndpointSpec.of("n1", NetworkNamespace.named("c1")));
 *     gatun.publish("n1", e.ip(), List.of(PortSpec.parse("8080:80")), null);
 * }
 * }</pre>
 */
public final class Gatun {

    private Gatun() {}

    /** A driver for {@code host} on nftables, the default. */
    public static NetworkDriver open(NetworkNamespace host) {
        return BridgeDriver.nftables(host);
    }
}
