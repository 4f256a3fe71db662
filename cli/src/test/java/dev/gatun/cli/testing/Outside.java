package dev.gatun.cli.testing;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A namespace that plays a machine on the LAN of a lab's host, joined to it by a veth as
 * {@link Lab#connectOutside} joins them (host 192.0.2.1, outside 192.0.2.2), for labs whose host
 * namespace the engine made, not the test's FreshNamespaces. Removed on close.
 */
public final class Outside implements AutoCloseable {

    private final NetworkNamespace ns;

    private Outside(NetworkNamespace ns) {
        this.ns = ns;
    }

    /** A new outside namespace joined to {@code host}. */
    public static Outside joinedTo(NetworkNamespace host) {
        String name = FreshNamespaces.PREFIX + "out-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        NetworkNamespace ns = NamedNamespaces.create(name);
        try {
            Lab.connectOutside(host, ns);
            return new Outside(ns);
        } catch (RuntimeException e) {
            NamedNamespaces.delete(name);
            throw e;
        }
    }

    public NetworkNamespace ns() {
        return ns;
    }

    @Override
    public void close() {
        if (NamedNamespaces.exists(ns.name())) {
            NamedNamespaces.delete(ns.name());
        }
    }
}
