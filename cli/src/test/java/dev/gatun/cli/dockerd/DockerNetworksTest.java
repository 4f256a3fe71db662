package dev.gatun.cli.dockerd;

import dev.gatun.driver.AdoptedBridge;
import dev.gatun.rtnl.Prefix;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Docker's networks, in the shape of Docker Engine API's {@code GET /networks}, as bridges to adopt; no dockerd needed. */
class DockerNetworksTest {

    private static final String NETWORKS = """
            [{'Name': 'bridge', 'Id': '0123456789abcdef0123', 'Driver': 'bridge', 'Internal': false, 'EnableIPv6': false,
              'IPAM': {'Config': [{'Subnet': '172.17.0.0/16', 'Gateway': '172.17.0.1'}]},
              'Options': {'com.docker.network.bridge.name': 'docker0', 'com.docker.network.bridge.default_bridge': 'true',
                          'com.docker.network.bridge.enable_ip_masquerade': 'false'}},
             {'Name': 'host', 'Id': 'fedcba987654', 'Driver': 'host', 'IPAM': {'Config': []}, 'Options': {}},
             {'Name': 'app_default', 'Id': 'aaaabbbbcccc1111', 'Driver': 'bridge', 'Internal': true, 'EnableIPv6': true,
              'IPAM': {'Config': [{'Subnet': 'fd00:db8::/64'}, {'Subnet': '172.18.0.0/16'}]},
              'Options': {'com.docker.network.bridge.enable_ip_masquerade': 'false',
                          'com.docker.network.bridge.enable_icc': 'false'}},
             {'Name': 'plugin-net', 'Id': 'dddd', 'Driver': 'gatun', 'IPAM': {'Config': [{'Subnet': '10.9.0.0/24'}]}}]""";

    @Test
    void everyBridgeNetworkIsABridgeToAdoptAndOnlyThose() throws Exception {
        var bridges = DockerNetworks.bridges(DockerEngine.JSON.readTree(NETWORKS.replace('\'', '"')));
        assertThat(bridges).containsExactly(
                new AdoptedBridge("docker:0123456789ab", "docker0", Prefix.parse("172.17.0.0/16"), null, true, false, true),
                new AdoptedBridge("docker:aaaabbbbcccc", "br-aaaabbbbcccc", Prefix.parse("172.18.0.0/16"),
                        Prefix.parse("fd00:db8::/64"), false, true, false));
        assertThat(bridges).allMatch(DockerNetworks::isDockers);
    }

    /** dockerd 20.10 with --iptables=false writes enable_ip_masquerade false on docker0 (it turns --ip-masq off). */
    @Test
    void theDefaultBridgeIsMasqueradedWhatEverDockerdWroteForItsOwnIptables() throws Exception {
        var b = DockerNetworks.bridges(DockerEngine.JSON.readTree(NETWORKS.replace('\'', '"'))).getFirst();
        assertThat(b.bridge()).isEqualTo("docker0");
        assertThat(b.masquerade()).isTrue();
    }

    @Test
    void anIpv6SubnetCountsOnlyWithIpv6Enabled() throws Exception {
        var b = DockerNetworks.bridge(DockerEngine.JSON.readTree(("{'Id': 'ab', 'Driver': 'bridge', 'EnableIPv6': false,"
                + " 'IPAM': {'Config': [{'Subnet': '10.1.0.0/24'}, {'Subnet': 'fd00::/64'}]}}").replace('\'', '"')));
        assertThat(b.subnet6()).isNull();
        assertThat(b.masquerade()).isTrue();
    }
}
