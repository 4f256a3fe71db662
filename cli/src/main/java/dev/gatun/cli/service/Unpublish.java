package dev.gatun.cli.service;

import dev.gatun.driver.PortSpec;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.List;

/** Remove the owner's published ports of a container address: those listed, or all when none is. */
public record Unpublish(String network, InetAddress containerIp, List<PortSpec> ports, String owner) {

    public Unpublish {
        Names.require(network, "network");
        ports = List.copyOf(ports);
    }

    public static Unpublish of(String network, String containerIp, List<String> specs, String owner) {
        List<PortSpec> ports = specs.stream().map(PortSpec::parse).toList();
        return new Unpublish(network, Prefix.address(containerIp), ports, owner);
    }
}
