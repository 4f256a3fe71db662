package dev.gatun.cli.service;

import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortSpec;
import dev.gatun.rtnl.Prefix;

import java.net.InetAddress;
import java.util.List;

/** Publish ports of a container address ({@code owner} null: the address). */
public record Publish(String network, InetAddress containerIp, List<PortSpec> ports, String owner, HostPortCheck check) {

    public Publish {
        Names.require(network, "network");
        ports = List.copyOf(ports);
    }

    /** From the words of a user: port specs as {@code docker run -p} takes them. */
    public static Publish of(String network, String containerIp, List<String> specs, String owner, HostPortCheck check) {
        List<PortSpec> ports = specs.stream().map(PortSpec::parse).toList();
        return new Publish(network, Prefix.address(containerIp), ports, owner, check);
    }
}
