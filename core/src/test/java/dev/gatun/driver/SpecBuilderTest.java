package dev.gatun.driver;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Each named option of a spec lands in its own component and in no other; no root needed. */
class SpecBuilderTest {

    private static final Prefix V4 = Prefix.parse("10.88.0.0/16");

    /** One named option: how to set it, how to read it back, and the value it sets. */
    record Option<B, S>(String name, UnaryOperator<B> set, Function<S, Object> component, Object value) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final List<Option<NetworkSpec.Builder, NetworkSpec>> NETWORK_OPTIONS = List.of(
            new Option<>("bridge", b -> b.bridge("br-x"), NetworkSpec::bridge, "br-x"),
            new Option<>("subnet4", b -> b.subnet4(Prefix.parse("10.99.0.0/24")), NetworkSpec::subnet4,
                    Prefix.parse("10.99.0.0/24")),
            new Option<>("gateway4", b -> b.gateway4(InetAddress.ofLiteral("10.88.0.254")), NetworkSpec::gateway4,
                    InetAddress.ofLiteral("10.88.0.254")),
            new Option<>("subnet6", b -> b.subnet6(Prefix.parse("fd00:88::/64")), NetworkSpec::subnet6,
                    Prefix.parse("fd00:88::/64")),
            new Option<>("gateway6", b -> b.gateway6(InetAddress.ofLiteral("fd00:88::fe")), NetworkSpec::gateway6,
                    InetAddress.ofLiteral("fd00:88::fe")),
            new Option<>("mac", b -> b.mac(MacAddress.parse("02:00:00:00:00:01")), NetworkSpec::mac,
                    MacAddress.parse("02:00:00:00:00:01")),
            new Option<>("mtu", b -> b.mtu(1400), NetworkSpec::mtu, 1400),
            new Option<>("icc off", b -> b.icc(false), NetworkSpec::icc, false),
            new Option<>("internal", b -> b.internal(true), NetworkSpec::internal, true),
            new Option<>("masquerade off", b -> b.masquerade(false), NetworkSpec::masquerade, false));

    private static final NetworkNamespace C1 = NetworkNamespace.at(Path.of("/proc/self/ns/net"));

    private static final List<Option<EndpointSpec.Builder, EndpointSpec>> ENDPOINT_OPTIONS = List.of(
            new Option<>("container", b -> b.container(C1), EndpointSpec::container, C1),
            new Option<>("ifname", b -> b.ifname("eth1"), EndpointSpec::ifname, "eth1"),
            new Option<>("ip", b -> b.ip(InetAddress.ofLiteral("10.88.0.7")), EndpointSpec::ip,
                    InetAddress.ofLiteral("10.88.0.7")),
            new Option<>("ip6", b -> b.ip6(InetAddress.ofLiteral("fd00:88::7")), EndpointSpec::ip6,
                    InetAddress.ofLiteral("fd00:88::7")),
            new Option<>("mac", b -> b.mac(MacAddress.parse("02:42:0a:58:00:07")), EndpointSpec::mac,
                    MacAddress.parse("02:42:0a:58:00:07")),
            new Option<>("owner", b -> b.owner("web-1"), EndpointSpec::owner, "web-1"));

    @Test
    void aNetworkOfOnlyANameAndASubnetHasTheDocumentedDefaults() {
        NetworkSpec spec = NetworkSpec.of("n1", V4);
        assertThat(spec.name()).isEqualTo("n1");
        assertThat(spec.subnet4()).isEqualTo(V4);
        assertThat(spec.bridge()).isNull();
        assertThat(spec.gateway4()).isNull();
        assertThat(spec.subnet6()).isNull();
        assertThat(spec.gateway6()).isNull();
        assertThat(spec.mac()).isNull();
        assertThat(spec.mtu()).isNull();
        assertThat(spec.icc()).as("containers reach each other").isTrue();
        assertThat(spec.internal()).as("the network reaches out").isFalse();
        assertThat(spec.masquerade()).as("what leaves is masqueraded").isTrue();
        assertThat(NetworkSpec.named("n1").subnet4(V4).build()).isEqualTo(spec);
    }

    @Test
    void anEndpointOfOnlyANetworkAndAContainerLeavesEverythingElseToTheDriver() {
        assertThat(EndpointSpec.of("n1", C1)).isEqualTo(EndpointSpec.on("n1").container(C1).build());
        assertThat(EndpointSpec.of("n1", C1)).extracting(EndpointSpec::network, EndpointSpec::container,
                EndpointSpec::ifname, EndpointSpec::ip, EndpointSpec::ip6, EndpointSpec::mac, EndpointSpec::owner)
                .containsExactly("n1", C1, null, null, null, null, null);
    }

    static Stream<Option<NetworkSpec.Builder, NetworkSpec>> networkOptions() {
        return NETWORK_OPTIONS.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("networkOptions")
    void aNetworkOptionSetsItsComponentOnly(Option<NetworkSpec.Builder, NetworkSpec> option) {
        NetworkSpec defaults = NetworkSpec.of("n1", V4);
        NetworkSpec spec = option.set().apply(NetworkSpec.named("n1").subnet4(V4)).build();
        assertThat(spec.name()).isEqualTo("n1");
        for (Option<NetworkSpec.Builder, NetworkSpec> other : NETWORK_OPTIONS) {
            Object expected = other == option ? option.value() : other.component().apply(defaults);
            assertThat(other.component().apply(spec)).as(other.name()).isEqualTo(expected);
        }
    }

    static Stream<Option<EndpointSpec.Builder, EndpointSpec>> endpointOptions() {
        return ENDPOINT_OPTIONS.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("endpointOptions")
    void anEndpointOptionSetsItsComponentOnly(Option<EndpointSpec.Builder, EndpointSpec> option) {
        EndpointSpec spec = option.set().apply(EndpointSpec.on("n1")).build();
        assertThat(spec.network()).isEqualTo("n1");
        for (Option<EndpointSpec.Builder, EndpointSpec> other : ENDPOINT_OPTIONS) {
            Object expected = other == option ? option.value() : null;
            assertThat(other.component().apply(spec)).as(other.name()).isEqualTo(expected);
        }
    }
}
