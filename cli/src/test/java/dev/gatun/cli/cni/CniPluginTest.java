package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.netlink.ReplyTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plugin's answers that need no kernel: VERSION, and every refusal before anything is
 * changed (the driver is never asked for). The error document is the spec's.
 */
class CniPluginTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONFIG = "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"gatun\", "
            + "\"ipam\": {\"type\": \"host-local\"}}";

    /** A driver that must not be used: the call is refused before it. */
    private static final Drivers UNUSED = new Drivers() {
        @Override
        public <T> T with(Function<? super GatunDriver, T> work) {
            throw new AssertionError("the driver was asked for, but the call should have been refused first");
        }
    };

    private static Map<String, String> env(String command) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", "c0ffee");
        env.put("CNI_NETNS", "/run/netns/nowhere");
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", "/nonexistent");
        env.put("PATH", "/usr/bin");
        return env;
    }

    private static JsonNode error(Map<String, String> env, String stdin, int code) throws Exception {
        CniPlugin.Outcome o = CniPlugin.run(env, stdin.getBytes(StandardCharsets.UTF_8), UNUSED);
        assertThat(o.exitCode()).isNotZero();
        JsonNode doc = JSON.readTree(o.stdout());
        assertThat(doc.path("code").asInt()).as(doc.toString()).isEqualTo(code);
        assertThat(doc.path("msg").asText()).isNotBlank();
        assertThat(doc.has("cniVersion")).isTrue();
        return doc;
    }

    @Test
    void versionListsEverySupportedVersion() throws Exception {
        CniPlugin.Outcome o = CniPlugin.run(Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\": \"0.4.0\"}"
                .getBytes(StandardCharsets.UTF_8), UNUSED);
        assertThat(o.exitCode()).isZero();
        JsonNode doc = JSON.readTree(o.stdout());
        assertThat(doc.path("cniVersion").asText()).isEqualTo("1.1.0");
        assertThat(doc.path("supportedVersions")).extracting(JsonNode::asText)
                .containsExactly("0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0");
    }

    @Test
    void versionNeedsNoConfig() {
        assertThat(CniPlugin.run(Map.of("CNI_COMMAND", "VERSION"), new byte[0], UNUSED).exitCode()).isZero();
    }

    @Test
    void malformedJsonIsADecodeError() throws Exception {
        error(env("ADD"), "{\"cniVersion\": \"1.0.0\", ", CniError.DECODE);
    }

    @Test
    void anUnknownVersionIsIncompatibleAndTheErrorIsInTheNewest() throws Exception {
        JsonNode doc = error(env("ADD"), "{\"cniVersion\": \"9.9.9\", \"name\": \"n\"}", CniError.INCOMPATIBLE_VERSION);
        assertThat(doc.path("cniVersion").asText()).isEqualTo("1.1.0");
        assertThat(doc.path("msg").asText()).contains("9.9.9");
    }

    @ParameterizedTest
    @ValueSource(strings = {"CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_PATH"})
    void addWithoutAVariableIsABadEnvironmentNamingIt(String variable) throws Exception {
        Map<String, String> env = env("ADD");
        env.remove(variable);
        JsonNode doc = error(env, CONFIG, CniError.BAD_ENVIRONMENT);
        assertThat(doc.path("msg").asText()).contains(variable);
        assertThat(doc.path("cniVersion").asText()).as("the error speaks the config's version").isEqualTo("1.0.0");
    }

    @Test
    void delNeedsNoNetns() throws Exception {
        Map<String, String> env = env("DEL");
        env.remove("CNI_NETNS");
        env.remove("CNI_CONTAINERID");
        JsonNode doc = error(env, CONFIG, CniError.BAD_ENVIRONMENT);
        assertThat(doc.path("msg").asText()).contains("CNI_CONTAINERID").doesNotContain("CNI_NETNS");
    }

    @ParameterizedTest
    @ValueSource(strings = {"eth0/1", "a-name-longer-than-15", "..", "eth 0", "eth:0"})
    void anInvalidIfnameIsABadEnvironment(String ifname) throws Exception {
        Map<String, String> env = env("ADD");
        env.put("CNI_IFNAME", ifname);
        assertThat(error(env, CONFIG, CniError.BAD_ENVIRONMENT).path("msg").asText()).contains("CNI_IFNAME '" + ifname + "'");
    }

    @Test
    void anInvalidContainerIdIsABadEnvironment() throws Exception {
        Map<String, String> env = env("DEL");
        env.put("CNI_CONTAINERID", "../etc");
        error(env, CONFIG, CniError.BAD_ENVIRONMENT);
    }

    @Test
    void anUnknownCommandIsABadEnvironment() throws Exception {
        error(env("UPGRADE"), CONFIG, CniError.BAD_ENVIRONMENT);
    }

    @Test
    void aPortOf70000IsAnInvalidConfigBeforeAnythingRuns() throws Exception {
        String config = "{\"cniVersion\": \"0.4.0\", \"name\": \"n\", \"ipam\": {\"type\": \"host-local\"}, "
                + "\"runtimeConfig\": {\"portMappings\": [{\"hostPort\": 70000, \"containerPort\": 80}]}}";
        assertThat(error(env("ADD"), config, CniError.INVALID_CONFIG).path("msg").asText()).contains("70000");
    }

    @Test
    void theMainPluginNeedsItsIpamPluginOnCniPath() throws Exception {
        Map<String, String> env = env("ADD");
        env.put("CNI_NETNS", "/proc/self/ns/net");
        assertThat(error(env, CONFIG, CniError.INVALID_CONFIG).path("msg").asText())
                .contains("host-local").contains("CNI_PATH");
    }

    @Test
    void aNetnsThatIsNotOneIsABadEnvironmentBeforeIpamRuns() throws Exception {
        assertThat(error(env("ADD"), CONFIG, CniError.BAD_ENVIRONMENT).path("msg").asText()).contains("/run/netns/nowhere");
        Map<String, String> env = env("ADD");
        env.put("CNI_NETNS", "/etc/hostname");
        assertThat(error(env, CONFIG, CniError.BAD_ENVIRONMENT).path("msg").asText()).contains("/etc/hostname");
    }

    @Test
    void checkAndGcNeedTheirVersions() throws Exception {
        error(env("CHECK"), "{\"cniVersion\": \"0.3.1\", \"name\": \"n\", \"prevResult\": {}}", CniError.INCOMPATIBLE_VERSION);
        error(env("GC"), "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", CniError.INCOMPATIBLE_VERSION);
    }

    @Test
    void aChainedAddWithoutAddressesToPublishToIsAnInvalidConfig() throws Exception {
        String config = "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {\"cniVersion\": \"1.0.0\", \"ips\": []}, "
                + "\"runtimeConfig\": {\"portMappings\": [{\"hostPort\": 8080, \"containerPort\": 80}]}}";
        error(env("ADD"), config, CniError.INVALID_CONFIG);
    }

    @Test
    void aChainedAddWithoutMappingsPassesThePrevResultOnInTheConfigsVersion() throws Exception {
        String config = """
                {"cniVersion": "1.0.0", "name": "n", "prevResult": {"cniVersion": "0.4.0",
                 "interfaces": [{"name": "eth0", "sandbox": "/run/netns/x"}],
                 "ips": [{"version": "4", "address": "10.88.0.5/16", "gateway": "10.88.0.1", "interface": 0}]}}""";
        CniPlugin.Outcome o = CniPlugin.run(env("ADD"), config.getBytes(StandardCharsets.UTF_8), UNUSED);
        assertThat(o.exitCode()).isZero();
        JsonNode r = JSON.readTree(o.stdout());
        assertThat(r.path("cniVersion").asText()).isEqualTo("1.0.0");
        assertThat(r.path("ips").get(0).has("version")).as("1.0.0 results have no ips[].version").isFalse();
        assertThat(r.path("ips").get(0).path("address").asText()).isEqualTo("10.88.0.5/16");
        assertThat(r.path("interfaces").get(0).path("sandbox").asText()).isEqualTo("/run/netns/x");
    }

    @Test
    void errorsCarryDetailsOnlyWhenThereAreSome() {
        assertThat(new CniError(7, "m").document("0.4.0")).containsOnlyKeys("cniVersion", "code", "msg");
        assertThat(new CniError(7, "m", "d").document("0.4.0")).containsEntry("details", "d");
    }

    /** A chained ADD whose commit got no reply in time: the runtime is told to try again (11), not that it failed. */
    @Test
    void aReplyTimeoutDuringAnAddIsTryAgain() throws Exception {
        Drivers timingOut = new Drivers() {
            @Override
            public <T> T with(Function<? super GatunDriver, T> work) {
                throw new ReplyTimeoutException("add element tcp . 8080 to map inet gatun ports4", Duration.ofSeconds(5));
            }
        };
        String chained = "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"gatun\","
                + " \"runtimeConfig\": {\"portMappings\": [{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"}]},"
                + " \"prevResult\": {\"cniVersion\": \"1.0.0\", \"interfaces\": [{\"name\": \"eth0\", \"sandbox\": \"/run/netns/c\"}],"
                + " \"ips\": [{\"address\": \"10.96.0.2/24\", \"interface\": 0}]}}";
        CniPlugin.Outcome o = CniPlugin.run(env("ADD"), chained.getBytes(StandardCharsets.UTF_8), timingOut);
        assertThat(o.exitCode()).isEqualTo(1);
        JsonNode doc = JSON.readTree(o.stdout());
        assertThat(doc.path("code").asInt()).as(doc.toString()).isEqualTo(CniError.TRY_AGAIN);
        assertThat(doc.path("msg").asText()).contains("ports4");
    }

    /**
     * A pod with two interfaces (Multus: net1, then eth0) and CNI_IFNAME=net1: the ports go to
     * net1's address, as portmap maps them, not to the last sandboxed one.
     */
    @Test
    void chainedAddMapsToTheAddressOfCniIfname() {
        List<String> published = new ArrayList<>();
        GatunDriver recording = (GatunDriver) Proxy.newProxyInstance(GatunDriver.class.getClassLoader(),
                new Class<?>[] {GatunDriver.class}, (proxy, method, args) -> {
                    if (method.getName().equals("publishOutside")) {
                        PortRequest r = (PortRequest) args[0];
                        published.add(r.containerIp().getHostAddress() + " " + r.owner());
                        return List.of();
                    }
                    throw new AssertionError("a chained ADD asked the driver for " + method.getName());
                });
        Drivers drivers = new Drivers() {
            @Override
            public <T> T with(Function<? super GatunDriver, T> work) {
                return work.apply(recording);
            }
        };
        String chained = "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"type\": \"gatun\","
                + " \"runtimeConfig\": {\"portMappings\": [{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"}]},"
                + " \"prevResult\": {\"cniVersion\": \"1.0.0\", \"interfaces\": [{\"name\": \"cni0\"},"
                + " {\"name\": \"net1\", \"sandbox\": \"/run/netns/c\"}, {\"name\": \"eth0\", \"sandbox\": \"/run/netns/c\"}],"
                + " \"ips\": [{\"address\": \"10.96.0.1/24\", \"interface\": 0},"
                + " {\"address\": \"10.97.0.7/24\", \"interface\": 1}, {\"address\": \"10.96.0.2/24\", \"interface\": 2}]}}";
        Map<String, String> env = env("ADD");
        env.put("CNI_IFNAME", "net1");
        CniPlugin.Outcome o = CniPlugin.run(env, chained.getBytes(StandardCharsets.UTF_8), drivers);
        assertThat(o.exitCode()).as(new String(o.stdout(), StandardCharsets.UTF_8)).isZero();
        assertThat(published).containsExactly("10.97.0.7 c0ffee/net1@n");
    }
}
