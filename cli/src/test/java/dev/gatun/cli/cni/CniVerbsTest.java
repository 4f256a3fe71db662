package dev.gatun.cli.cni;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.service.Drivers;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.Network;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortsByAddress;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ADD's undo, DEL's idempotence and GC's owner filter, without root: a stand-in driver that
 * records what it is asked and answers from what the test gives it, and an IPAM plugin that is a
 * script of the test's own, answering ADD with a canned result and logging every verb.
 */
class CniVerbsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.5");

    @TempDir
    Path dir;

    /** What the stand-in driver was asked, in order: "attach n c1/eth0", "detachOwner n c1/eth0", ... */
    private final List<String> asked = new ArrayList<>();
    private final List<Endpoint> endpoints = new ArrayList<>();
    private final List<PortMapping> published = new ArrayList<>();
    private final List<PortMapping> outside = new ArrayList<>();
    private RuntimeException publishFails;

    @BeforeEach
    void ipamScript() throws IOException {
        Path ipam = dir.resolve("canned-ipam");
        Files.writeString(ipam, """
                #!/bin/sh
                cat > /dev/null
                echo "$CNI_COMMAND $CNI_CONTAINERID" >> "%s"
                case "$CNI_COMMAND" in
                  ADD) echo '{"cniVersion": "1.0.0", "ips": [{"address": "10.88.0.5/24", "gateway": "10.88.0.1"}]}' ;;
                  VERSION) echo '{"cniVersion": "1.0.0", "supportedVersions": ["0.4.0", "1.0.0"]}' ;;
                esac
                """.formatted(dir.resolve("ipam.log")));
        Files.setPosixFilePermissions(ipam, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private List<String> ipamLog() throws IOException {
        Path log = dir.resolve("ipam.log");
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    private Drivers drivers() {
        Network n = new Network("n", "cnt-n", MacAddress.parse("02:00:00:00:00:01"), List.of(Prefix.parse("10.88.0.0/24")),
                List.of(InetAddress.ofLiteral("10.88.0.1")), true, false, true, 1500);
        GatunDriver d = (GatunDriver) Proxy.newProxyInstance(GatunDriver.class.getClassLoader(),
                new Class<?>[] {GatunDriver.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "networks" -> List.of(n);
                    case "endpoints" -> List.copyOf(endpoints);
                    case "published" -> List.copyOf(published);
                    case "publishedOutside" -> List.copyOf(outside);
                    case "attach" -> {
                        EndpointSpec spec = (EndpointSpec) args[0];
                        asked.add("attach n " + spec.owner());
                        yield new Endpoint("n", "c", spec.ifname(), "veth0", spec.ip(), null,
                                MacAddress.parse("02:00:00:00:00:02"), spec.owner());
                    }
                    case "publish", "publishAll" -> {
                        asked.add("publish n " + (args[0] instanceof PortRequest r ? r.owner() : ((PortsByAddress) args[0]).owner()));
                        if (publishFails != null) {
                            throw publishFails;
                        }
                        yield List.of();
                    }
                    case "detachOwner" -> {
                        asked.add(method.getName() + " " + args[0] + " " + args[1]);
                        yield null;
                    }
                    case "unpublishOutside" -> {
                        PortRequest r = (PortRequest) args[0];
                        asked.add(method.getName() + " " + r.network() + " " + r.owner());
                        yield null;
                    }
                    case "unpublish" -> {
                        PortRequest r = (PortRequest) args[0];
                        asked.add("unpublish " + r.network() + " " + r.owner());
                        yield List.of();
                    }
                    default -> throw new AssertionError("the driver was asked for " + method.getName());
                });
        return new Drivers() {
            @Override
            public <T> T with(Function<? super GatunDriver, T> work) {
                return work.apply(d);
            }
        };
    }

    private Map<String, String> env(String command, String id) {
        Map<String, String> env = new HashMap<>();
        env.put("CNI_COMMAND", command);
        if (id != null) {
            env.put("CNI_CONTAINERID", id);
            env.put("CNI_NETNS", "/proc/self/ns/net");
            env.put("CNI_IFNAME", "eth0");
        }
        env.put("CNI_PATH", dir.toString());
        return env;
    }

    private CniPlugin.Outcome run(String command, String id, String config) {
        return CniPlugin.run(env(command, id), config.getBytes(StandardCharsets.UTF_8), drivers());
    }

    private static String config(String version, String extra) {
        return "{\"cniVersion\": \"" + version + "\", \"name\": \"n\", \"type\": \"gatun\", \"ipam\": {\"type\": "
                + "\"canned-ipam\"}" + extra + "}";
    }

    @Test
    void aFailedAddUndoesTheAttachmentThenGivesTheAddressBack() throws IOException {
        publishFails = new ConflictException("host port *:8080/tcp is held by owner web-2");
        CniPlugin.Outcome o = run("ADD", "c1", config("1.0.0", ", \"runtimeConfig\": {\"portMappings\": "
                + "[{\"hostPort\": 8080, \"containerPort\": 80, \"protocol\": \"tcp\"}]}"));
        JsonNode doc = JSON.readTree(o.stdout());
        assertThat(o.exitCode()).isEqualTo(1);
        assertThat(doc.path("code").asInt()).isEqualTo(CniError.CONFLICT);
        assertThat(doc.path("msg").asText()).contains("web-2");
        assertThat(asked).containsExactly("attach n c1/eth0", "publish n c1/eth0", "detachOwner n c1/eth0");
        assertThat(ipamLog()).containsExactly("ADD c1", "DEL c1");
    }

    @Test
    void delOfWhatIsGoneSucceedsAgainAndAgain() throws IOException {
        for (int i = 0; i < 2; i++) {
            assertThat(run("DEL", "c1", config("1.0.0", "")).exitCode()).isZero();
        }
        assertThat(asked).as("nothing of c1's was there to remove").isEmpty();
        assertThat(ipamLog()).containsExactly("DEL c1", "DEL c1");
        endpoints.add(new Endpoint("n", "c", "eth0", "veth0", C1, null, MacAddress.parse("02:00:00:00:00:02"), "c1/eth0"));
        assertThat(run("DEL", "c1", config("1.0.0", "")).exitCode()).isZero();
        assertThat(asked).containsExactly("detachOwner n c1/eth0");
    }

    @Test
    void gcCollectsOnlyStaleAttachmentsOfItsOwnNetwork() throws IOException {
        MacAddress mac = MacAddress.parse("02:00:00:00:00:02");
        endpoints.add(new Endpoint("n", "c", "eth0", "veth1", C1, null, mac, "c1/eth0"));
        endpoints.add(new Endpoint("n", "c", "eth0", "veth2", InetAddress.ofLiteral("10.88.0.6"), null, mac, "c2/eth0"));
        endpoints.add(new Endpoint("n", "c", "eth0", "veth3", InetAddress.ofLiteral("10.88.0.7"), null, mac, "web-1"));
        published.add(mapping("n", "10.88.0.8", "c5/eth0"));
        published.add(mapping("n", "10.88.0.9", "web-1"));
        outside.add(mapping(null, "10.96.0.2", "c3/eth0@n"));
        outside.add(mapping(null, "10.96.0.3", "c4/eth0@other"));
        outside.add(mapping(null, "10.96.0.4", "c1/eth0@n"));
        CniPlugin.Outcome o = run("GC", null, config("1.1.0",
                ", \"cni.dev/valid-attachments\": [{\"containerID\": \"c1\", \"ifname\": \"eth0\"}]"));
        assertThat(o.exitCode()).as(new String(o.stdout(), StandardCharsets.UTF_8)).isZero();
        assertThat(asked).containsExactlyInAnyOrder("detachOwner n c2/eth0", "unpublish n c5/eth0",
                "unpublishOutside n c3/eth0@n");
        assertThat(new String(o.stderr(), StandardCharsets.UTF_8)).contains("canned-ipam does not speak spec 1.1.0");
        assertThat(ipamLog()).containsExactly("VERSION ");
    }

    private static PortMapping mapping(String network, String containerIp, String owner) {
        return new PortMapping(network, Protocol.TCP, null, 8080, InetAddress.ofLiteral(containerIp), 80, owner);
    }
}
