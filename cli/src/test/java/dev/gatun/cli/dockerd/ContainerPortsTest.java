package dev.gatun.cli.dockerd;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.PortSpec;
import dev.gatun.rtnl.Prefix;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A container's ports from its inspect document, in the shape of Docker Engine API's
 * {@code GET /containers/{id}/json} (NetworkSettings.Ports and Networks); no dockerd needed.
 */
class ContainerPortsTest {

    private static JsonNode json(String text) throws Exception {
        return DockerEngine.JSON.readTree(text.replace('\'', '"'));
    }

    private static final String WEB = """
            {'Id': 'aa11', 'State': {'Running': true},
             'NetworkSettings': {
               'Ports': {
                 '80/tcp': [{'HostIp': '0.0.0.0', 'HostPort': '8080'}, {'HostIp': '::', 'HostPort': '8080'}],
                 '53/udp': [{'HostIp': '127.0.0.1', 'HostPort': '5353'}],
                 '9000/tcp': null,
                 '7/sctp': [{'HostIp': '', 'HostPort': '7007'}]},
               'Networks': {
                 'zz-other': {'IPAddress': '', 'Gateway': '', 'NetworkID': 'n2'},
                 'bridge': {'IPAddress': '172.17.0.2', 'Gateway': '172.17.0.1', 'GlobalIPv6Address': '',
                            'NetworkID': 'n1'}}}}""";

    @Test
    void everyBindingDockerdRecordedGoesToTheContainersAddressOnItsGatewayNetwork() throws Exception {
        ContainerPorts c = ContainerPorts.of(json(WEB));
        assertThat(c.owner()).isEqualTo("docker:aa11");
        assertThat(c.network()).isEqualTo("bridge");
        assertThat(c.networkId()).isEqualTo("n1");
        assertThat(c.ports()).containsOnlyKeys(Prefix.address("172.17.0.2"));
        // [::]:8080 has no IPv6 address to go to; 9000 is exposed, not published.
        assertThat(c.ports().get(Prefix.address("172.17.0.2"))).containsExactly(
                PortSpec.parse("8080:80"), PortSpec.parse("127.0.0.1:5353:53/udp"), PortSpec.parse("7007:7/sctp"));
    }

    @Test
    void theIpv6WildcardGoesToTheContainersIpv6Address() throws Exception {
        ContainerPorts c = ContainerPorts.of(json(WEB.replace("'GlobalIPv6Address': ''", "'GlobalIPv6Address': 'fd00:17::2'")));
        assertThat(c.ports().get(Prefix.address("fd00:17::2"))).containsExactly(PortSpec.parse("8080:80"));
    }

    @Test
    void aContainerWithoutAnAddressOrNotRunningPublishesNothing() throws Exception {
        assertThat(ContainerPorts.of(json("{'Id': 'bb', 'NetworkSettings': {'Networks': {'host': {'IPAddress': ''}},"
                + " 'Ports': {'80/tcp': [{'HostIp': '0.0.0.0', 'HostPort': '80'}]}}}")).ports()).isEmpty();
        assertThat(ContainerPorts.of(json(WEB.replace("'Running': true", "'Running': false"))).ports()).isEmpty();
    }

    @Test
    void whatIsNotDockersShapeIsRefusedNamingIt() throws Exception {
        assertThatThrownBy(() -> ContainerPorts.of(json(WEB.replace("'53/udp'", "'53/quic'"))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("53/quic");
        assertThatThrownBy(() -> ContainerPorts.of(json("{'NetworkSettings': {}}")))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("without an Id");
    }

    @Test
    void aDockerHostIsAUnixSocket() {
        assertThat(DockerEngine.socketOf("unix:///var/run/docker.sock")).hasToString("/var/run/docker.sock");
        assertThatThrownBy(() -> DockerEngine.socketOf("tcp://10.0.0.1:2375")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("tcp://10.0.0.1:2375");
    }

    @Test
    void whatAContainerAskedForAtCreateIsItsNumberedPortsToTheAddressGiven() throws Exception {
        ContainerPorts c = ContainerPorts.requested("cc22", json("""
                {'NetworkMode': 'default', 'PortBindings': {
                   '80/tcp': [{'HostIp': '', 'HostPort': '8080'}],
                   '81/tcp': [{'HostIp': '', 'HostPort': ''}],
                   '82/tcp': [{'HostIp': '', 'HostPort': '9000-9010'}],
                   '53/udp': [{'HostIp': '127.0.0.1', 'HostPort': '5353'}],
                   '443/tcp': [{'HostIp': '::', 'HostPort': '8443'}]}}"""), "bridge", "n1", Prefix.address("172.17.0.3"), null);
        assertThat(c.owner()).isEqualTo("docker:cc22");
        // 81 and 82 (-p 9000-9010:82: a range to choose from) wait for the port dockerd chooses; [::]:8443 for
        // an IPv6 address.
        assertThat(c.ports()).containsExactly(java.util.Map.entry(Prefix.address("172.17.0.3"),
                java.util.List.of(PortSpec.parse("8080:80"), PortSpec.parse("127.0.0.1:5353:53/udp"))));
    }

    @Test
    void onADualStackNetworkABindingWithoutAnAddressIsAskedForBothFamilies() throws Exception {
        ContainerPorts c = ContainerPorts.requested("cc22", json("""
                {'NetworkMode': 'v6net', 'PortBindings': {
                   '80/tcp': [{'HostIp': '', 'HostPort': '8080'}],
                   '81/tcp': [{'HostIp': '0.0.0.0', 'HostPort': '8081'}],
                   '443/tcp': [{'HostIp': '::', 'HostPort': '8443'}]}}"""), "v6net", "n1", Prefix.address("172.31.248.2"),
                Prefix.address("fd00:31:248::2"));
        // -p 8080:80 is recorded twice by dockerd, 0.0.0.0 and [::]; -p 0.0.0.0:8081:81 only once.
        assertThat(c.ports()).containsExactly(
                java.util.Map.entry(Prefix.address("172.31.248.2"), java.util.List.of(PortSpec.parse("8080:80"),
                        PortSpec.parse("8081:81"))),
                java.util.Map.entry(Prefix.address("fd00:31:248::2"), java.util.List.of(PortSpec.parse("8080:80"),
                        PortSpec.parse("8443:443"))));
    }
}
