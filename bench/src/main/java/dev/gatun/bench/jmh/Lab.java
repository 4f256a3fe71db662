package dev.gatun.bench.jmh;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.HealableDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** A private namespace with a gatun network, made in a benchmark's setup and removed in its teardown. */
final class Lab implements AutoCloseable {

    private static final AtomicInteger COUNT = new AtomicInteger();

    final NetworkNamespace ns;
    final HealableDriver driver;

    Lab() {
        this(false);
    }

    /** {@code counters}: network n1 is made with per-port counters. */
    Lab(boolean counters) {
        ns = NamedNamespaces.create("gatun-jmh-" + ProcessHandle.current().pid() + "-" + COUNT.incrementAndGet());
        driver = Gatun.open(ns, "nftables");
        driver.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse("10.88.0.0/16")).counters(counters).build());
    }

    /** {@code n} mappings published before measuring: tcp and udp ports from 1, to 10.88.0.9. */
    void populate(int n) {
        List<PortSpec> specs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            specs.add(PortSpec.parse((i / 2 + 1) + ":80" + (i % 2 == 0 ? "/tcp" : "/udp")));
        }
        if (!specs.isEmpty()) {
            driver.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.9"), specs, "bench"));
        }
    }

    @Override
    public void close() {
        driver.close();
        NamedNamespaces.delete(ns.name());
    }
}
