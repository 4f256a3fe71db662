package dev.gatun.testing;

import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.driver.foreign.ForeignDrop;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.util.List;

/**
 * Run by a test in a child JVM, since gatun reads its accept mark once per JVM: in host
 * namespace {@code args[0]}, makes network n1 on subnet {@code args[1]}, attaches container
 * namespace {@code args[2]} and publishes host port 8080 to its port 80. Prints
 * {@code ip ADDRESS}, then {@code drop WHERE<TAB>ACTION} per drop of another firewall; on a
 * failure the exception's type and message, and exits 2. What it made stays in the kernel.
 */
public final class MarkedNetwork {

    public static void main(String[] args) {
        try (BridgeDriver gatun = BridgeDriver.nftables(NetworkNamespace.of(args[0]))) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse(args[1])));
            Endpoint e = gatun.attach(EndpointSpec.of("n1", NetworkNamespace.of(args[2])));
            gatun.publish(new PortRequest("n1", e.ip(), List.of(PortSpec.parse("8080:80")), null));
            System.out.println("ip " + e.ip().getHostAddress());
            for (ForeignDrop d : gatun.foreignDrops()) {
                System.out.println("drop " + d.where() + "\t" + d.action());
            }
        } catch (RuntimeException e) {
            System.out.println(e.getClass().getName());
            System.out.println(e.getMessage());
            System.exit(2);
        }
    }
}
