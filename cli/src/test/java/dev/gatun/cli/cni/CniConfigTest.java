package dev.gatun.cli.cni;

import dev.gatun.driver.Protocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** The config a runtime sends, read without root and without a kernel. */
class CniConfigTest {

    private static CniConfig parse(String json) {
        return CniConfig.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    private static CniError refused(String json) {
        CniError e = catchThrowableOfType(CniError.class, () -> parse(json));
        assertThat(e).as("refused: " + json).isNotNull();
        return e;
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"})
    void everyVersionRuntimesWriteIsRead(String version) {
        CniConfig c = parse("{\"cniVersion\": \"" + version + "\", \"name\": \"podman\", \"type\": \"gatun\"}");
        assertThat(c.cniVersion()).isEqualTo(version);
        assertThat(c.name()).isEqualTo("podman");
        assertThat(c.chained()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"0.1.0", "0.2.0", "2.0.0", "1.0", ""})
    void anotherVersionIsIncompatible(String version) {
        CniError e = refused("{\"cniVersion\": \"" + version + "\", \"name\": \"n\"}");
        assertThat(e.code()).isEqualTo(CniError.INCOMPATIBLE_VERSION);
        assertThat(e.getMessage()).contains("cniVersion " + version + " ").contains("1.1.0");
    }

    @Test
    void theBridgePluginsKeysAndGatunsAreRead() {
        CniConfig c = parse("""
                {"cniVersion": "0.4.0", "name": "podman", "type": "gatun", "bridge": "cni-podman0",
                 "isGateway": true, "ipMasq": true, "hairpinMode": true, "mtu": 1400, "icc": false, "internal": true,
                 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/16"}]]}}""");
        assertThat(c.bridge()).isEqualTo("cni-podman0");
        assertThat(c.isGateway()).isTrue();
        assertThat(c.isDefaultGateway()).isFalse();
        assertThat(c.ipMasq()).isTrue();
        assertThat(c.hairpinMode()).isTrue();
        assertThat(c.mtu()).isEqualTo(1400);
        assertThat(c.icc()).isFalse();
        assertThat(c.internal()).isTrue();
        assertThat(c.ipamType()).isEqualTo("host-local");
    }

    @Test
    void defaultsAreTheBridgePlugins() {
        CniConfig c = parse("{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"isDefaultGateway\": true}");
        assertThat(c.bridge()).isNull();
        assertThat(c.isGateway()).as("isDefaultGateway implies isGateway").isTrue();
        assertThat(c.ipMasq()).isFalse();
        assertThat(c.icc()).isTrue();
        assertThat(c.internal()).isFalse();
        assertThat(c.mtu()).isNull();
        assertThat(c.portMappings()).isEmpty();
    }

    @Test
    void unknownKeysAreIgnored() {
        CniConfig c = parse("""
                {"cniVersion": "1.0.0", "name": "n", "type": "gatun", "capabilities": {"portMappings": true},
                 "someoneElsesKey": [1, {"x": null}], "vlan": 5, "dns": {"nameservers": ["10.0.0.1"]},
                 "runtimeConfig": {"portMappings": [], "bandwidth": {"ingressRate": 1}}, "args": {"cni": {}}}""");
        assertThat(c.name()).isEqualTo("n");
    }

    @Test
    void portMappingKeysAreReadWhateverTheirCase() throws Exception {
        CniConfig c = parse("""
                {"cniVersion": "1.0.0", "name": "n", "runtimeConfig": {"portMappings": [
                  {"hostPort": 8080, "containerPort": 80, "protocol": "tcp"},
                  {"HostPort": 5353, "ContainerPort": 53, "Protocol": "UDP", "HostIP": "127.0.0.1"},
                  {"HOSTPORT": 9000, "containerport": 9000, "protocol": "sctp", "hostIP": ""},
                  {"hostPort": 8443, "containerPort": 443, "hostIp": "0.0.0.0"}]}}""");
        assertThat(c.portMappings()).containsExactly(
                new CniConfig.PortMapping(8080, 80, Protocol.TCP, null),
                new CniConfig.PortMapping(5353, 53, Protocol.UDP, InetAddress.getByName("127.0.0.1")),
                new CniConfig.PortMapping(9000, 9000, Protocol.SCTP, null),
                new CniConfig.PortMapping(8443, 443, Protocol.TCP, null));
    }

    @Test
    void aMappingWithoutAHostPortIsSkipped() {
        CniConfig c = parse("""
                {"cniVersion": "0.4.0", "name": "n", "runtimeConfig": {"portMappings": [
                  {"hostPort": 0, "containerPort": 80}, {"containerPort": 81}, {"hostPort": 82, "containerPort": 82}]}}""");
        assertThat(c.portMappings()).extracting(CniConfig.PortMapping::hostPort).containsExactly(82);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "{\"hostPort\": 70000, \"containerPort\": 80}|runtimeConfig.portMappings[0].hostPort 70000",
            "{\"hostPort\": 80, \"containerPort\": 0}|runtimeConfig.portMappings[0].containerPort 0",
            "{\"hostPort\": 80, \"containerPort\": -1}|runtimeConfig.portMappings[0].containerPort -1",
            "{\"hostPort\": 80}|runtimeConfig.portMappings[0].containerPort is missing",
            "{\"hostPort\": \"80\", \"containerPort\": 80}|runtimeConfig.portMappings[0].hostPort \"80\"",
            "{\"hostPort\": 80, \"containerPort\": 80, \"protocol\": \"icmp\"}|'icmp'",
            "{\"hostPort\": 80, \"containerPort\": 80, \"hostIP\": \"10.0.0\"}|'10.0.0'",
            "7|runtimeConfig.portMappings[0] 7"})
    void aBadMappingIsAnInvalidConfigNamingTheValue(String mapping, String named) {
        CniError e = refused("{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"runtimeConfig\": {\"portMappings\": ["
                + mapping + "]}}");
        assertThat(e.code()).isEqualTo(CniError.INVALID_CONFIG);
        assertThat(e.getMessage()).contains(named);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "\"mtu\": 10|mtu 10",
            "\"mtu\": \"1500\"|mtu \"1500\"",
            "\"ipMasq\": \"yes\"|ipMasq \"yes\"",
            "\"isGateway\": 1|isGateway 1",
            "\"bridge\": 5|bridge 5",
            "\"ipam\": []|ipam []",
            "\"ipam\": {\"type\": \"../x\"}|ipam.type '../x'",
            "\"prevResult\": 3|prevResult 3",
            "\"cni.dev/valid-attachments\": [{\"containerID\": 1}]|cni.dev/valid-attachments[0]"})
    void aBadValueIsAnInvalidConfigNamingIt(String entry, String named) {
        CniError e = refused("{\"cniVersion\": \"1.1.0\", \"name\": \"n\", " + entry + "}");
        assertThat(e.code()).isEqualTo(CniError.INVALID_CONFIG);
        assertThat(e.getMessage()).contains(named);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"cniVersion\": \"1.0.0\"}", "{\"cniVersion\": \"1.0.0\", \"name\": \"\"}",
            "{\"cniVersion\": \"1.0.0\", \"name\": \"a b\"}", "{\"cniVersion\": \"1.0.0\", \"name\": \"-x\"}"})
    void aMissingOrBadNameIsAnInvalidConfig(String json) {
        assertThat(refused(json).code()).isEqualTo(CniError.INVALID_CONFIG);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "not json", "[1, 2]", "\"a string\"", "{\"cniVersion\": }"})
    void whatIsNotAJsonObjectIsADecodeError(String stdin) {
        assertThat(refused(stdin).code()).isEqualTo(CniError.DECODE);
    }

    @Test
    void aPrevResultMakesItChained() {
        CniConfig c = parse("{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {\"ips\": []}}");
        assertThat(c.chained()).isTrue();
    }

    @Test
    void gcReadsBothAttachmentKeys() {
        CniConfig c = parse("""
                {"cniVersion": "1.1.0", "name": "n",
                 "cni.dev/valid-attachments": [{"containerID": "a1", "ifname": "eth0"}],
                 "cni.dev/attachments": [{"containerID": "b2", "ifname": "eth1"}]}""");
        assertThat(c.validAttachments()).containsExactlyInAnyOrder("a1/eth0", "b2/eth1");
        assertThat(parse("{\"cniVersion\": \"1.1.0\", \"name\": \"n\"}").validAttachments()).isNull();
    }
}
