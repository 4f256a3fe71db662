package dev.gatun.cli.command;

import dev.gatun.cli.service.Served;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code net create} and {@code attach} ask the driver for: every option lands in its
 * part of the spec, and what is not given keeps the default. No root: the driver is a stand-in
 * that records the spec it was given.
 */
class SpecsFromOptionsTest {

    private static final MacAddress ANY_MAC = MacAddress.parse("02:00:00:00:00:99");

    private final List<Object> asked = new ArrayList<>();

    private GatunDriver recording() {
        return StandInDriver.answering(Map.of(
                "createNetwork", args -> {
                    NetworkSpec s = (NetworkSpec) args[0];
                    asked.add(s);
                    return new Network(s.name(), "gatun-" + s.name(), ANY_MAC, List.of(s.subnet4()),
                            List.of(InetAddress.ofLiteral("10.0.0.1")), s.icc(), s.internal(), s.masquerade(), 1500);
                },
                "attach", args -> {
                    EndpointSpec s = (EndpointSpec) args[0];
                    asked.add(s);
                    return new Endpoint(s.network(), "c", "eth0", "gv0", InetAddress.ofLiteral("10.0.0.2"), null, ANY_MAC,
                            "o");
                }));
    }

    private <T> T specOf(Class<T> type, String... args) {
        StringWriter err = new StringWriter();
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());
        int code = CommandLines.run(args, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true), served);
        assertThat(code).as(err.toString()).isZero();
        assertThat(asked).hasSize(1);
        return type.cast(asked.getFirst());
    }

    @Test
    void netCreateWithASubnetOnlyAsksForEveryDefault() {
        NetworkSpec spec = specOf(NetworkSpec.class, "net", "create", "n1", "--subnet", "10.88.0.0/16");
        assertThat(spec).isEqualTo(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
    }

    @Test
    void netCreatePassesEveryOption() {
        NetworkSpec spec = specOf(NetworkSpec.class, "net", "create", "n2", "--subnet", "fd00:89::/64", "--subnet",
                "10.89.0.0/16", "--bridge", "br-n2", "--gateway", "10.89.0.254", "--mac", "02:00:00:00:00:01",
                "--mtu", "1400", "--no-icc", "--internal");
        assertThat(spec.name()).isEqualTo("n2");
        assertThat(spec.subnet4()).isEqualTo(Prefix.parse("10.89.0.0/16"));
        assertThat(spec.subnet6()).isEqualTo(Prefix.parse("fd00:89::/64"));
        assertThat(spec.bridge()).isEqualTo("br-n2");
        assertThat(spec.gateway4()).isEqualTo(InetAddress.ofLiteral("10.89.0.254"));
        assertThat(spec.gateway6()).as("the CLI takes one --gateway, for IPv4").isNull();
        assertThat(spec.mac()).isEqualTo(MacAddress.parse("02:00:00:00:00:01"));
        assertThat(spec.mtu()).isEqualTo(1400);
        assertThat(spec.icc()).as("--no-icc").isFalse();
        assertThat(spec.internal()).as("--internal").isTrue();
        assertThat(spec.masquerade()).as("the CLI always masquerades").isTrue();
    }

    @Test
    void attachPassesEveryOption() {
        EndpointSpec spec = specOf(EndpointSpec.class, "attach", "n1", "/proc/self/ns/net", "--ip", "10.88.0.7",
                "--ip6", "fd00:88::7", "--ifname", "eth1", "--mac", "02:42:0a:58:00:07", "--owner", "web-1");
        assertThat(spec.network()).isEqualTo("n1");
        assertThat(spec.container().inode()).isEqualTo(NetworkNamespace.current().inode());
        assertThat(spec.ip()).isEqualTo(InetAddress.ofLiteral("10.88.0.7"));
        assertThat(spec.ip6()).isEqualTo(InetAddress.ofLiteral("fd00:88::7"));
        assertThat(spec.ifname()).isEqualTo("eth1");
        assertThat(spec.mac()).isEqualTo(MacAddress.parse("02:42:0a:58:00:07"));
        assertThat(spec.owner()).isEqualTo("web-1");
    }

    @Test
    void attachWithoutOptionsLeavesEveryChoiceToTheDriver() {
        EndpointSpec spec = specOf(EndpointSpec.class, "attach", "n1", "/proc/self/ns/net");
        assertThat(spec).extracting(EndpointSpec::ifname, EndpointSpec::ip, EndpointSpec::ip6, EndpointSpec::mac,
                EndpointSpec::owner).containsOnlyNulls();
    }
}
