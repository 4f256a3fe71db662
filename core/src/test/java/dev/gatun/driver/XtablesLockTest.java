package dev.gatun.driver;

import dev.gatun.facade.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.driver.bridge.BridgeDriver;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.XtablesLockHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The first field report as a permanent test: docker run -p failed while another process held
 * the xtables lock, because one existence check ran iptables without --wait.
 */
@ExtendWith(FreshNamespaces.class)
class XtablesLockTest {

    private static final InetAddress C1 = InetAddress.ofLiteral("10.88.0.2");

    @Test
    void nftablesPublishesHundredMappingsBeforeTheLockIsReleased(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = Gatun.open(host, "nftables")) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            Process holder = XtablesLockHolder.hold(3);
            for (int i = 0; i < 100; i++) {
                gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse((8000 + i) + ":80")), null));
            }
            assertThat(holder.isAlive()).as("finished while the lock was still held").isTrue();
            Bounded.waitFor(holder, Duration.ofMinutes(2), "the process holding the xtables lock");
            assertThat(gatun.published("n1")).hasSize(100);
        }
    }

    @Test
    void iptablesLegacyWaitsForTheLockAndNoPublishFails(NetworkNamespace host) throws Exception {
        try (GatunDriver gatun = Gatun.open(host, "iptables-legacy")) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            Process holder = XtablesLockHolder.hold(3);
            List<Throwable> failures = new ArrayList<>();
            List<Thread> publishers = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                int port = 8000 + i;
                publishers.add(Thread.ofPlatform().start(() -> {
                    try {
                        gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse(port + ":80")), null));
                    } catch (Throwable t) {
                        synchronized (failures) {
                            failures.add(t);
                        }
                    }
                }));
            }
            for (Thread t : publishers) {
                Bounded.join(t, "a publisher racing the xtables lock");
            }
            assertThat(holder.isAlive()).as("the publishes waited for the lock").isFalse();
            assertThat(failures).isEmpty();
            assertThat(gatun.published("n1")).hasSize(10);
        }
    }

    @Test
    void everyLockTakingCallPassesWait(NetworkNamespace host) throws IOException {
        Path dir = Files.createTempDirectory("gatun-trace");
        Path log = dir.resolve("calls.log");
        List<String> programs = List.of("iptables-legacy", "ip6tables-legacy", "iptables-legacy-restore",
                "ip6tables-legacy-restore", "iptables-legacy-save", "ip6tables-legacy-save");
        for (String p : programs) {
            String real = Oracle.host("sh", "-c", "command -v " + p).strip();
            Path wrapper = dir.resolve(p);
            Files.writeString(wrapper, "#!/bin/sh\nprintf '%s\\n' \"" + p + " $*\" >> " + log + "\nexec " + real + " \"$@\"\n");
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        try (GatunDriver gatun = BridgeDriver.iptables(host, "iptables-legacy", dir + ":" + System.getenv("PATH"))) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80"), PortSpec.parse("53:53/udp")), "alice"));
            gatun.published("n1");
            gatun.unpublish(new PortRequest("n1", C1, List.of(), "alice"));
            gatun.deleteNetwork("n1", false);
        }
        List<String> calls = Files.readAllLines(log);
        assertThat(calls).hasSizeGreaterThan(10);
        for (String call : calls) {
            boolean takesLock = !call.startsWith("iptables-legacy-save") && !call.startsWith("ip6tables-legacy-save")
                    && !call.contains(" --version");
            if (takesLock) {
                assertThat(List.of(call.split(" "))).as(call).contains("-w");
            }
        }
        assertThat(calls).anyMatch(c -> c.startsWith("iptables-legacy-restore -w"));
        for (Path p : Files.list(dir).toList()) {
            Files.delete(p);
        }
        Files.delete(dir);
    }

    @Test
    void inputThatTriesToBreakOutOfARuleIsRejectedOrNeutralised(NetworkNamespace host, NetworkNamespace other) {
        String clean;
        String hostile;
        try (GatunDriver gatun = Gatun.open(host, "iptables-legacy")) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), "x\" -j ACCEPT")))
                    .isInstanceOf(InvalidInputException.class);
            assertThatThrownBy(() -> gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), "x\n-A FORWARD -j ACCEPT")))
                    .isInstanceOf(InvalidInputException.class);
            // Port specs and addresses with words of a command line in them: PortSpecTest, RtnlInputChecksTest.
            gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), "evil -j ACCEPT --comment x"));
            hostile = IptablesState.of(host, "legacy");
        }
        try (GatunDriver gatun = Gatun.open(other, "iptables-legacy")) {
            gatun.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            gatun.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), "clean"));
            clean = IptablesState.of(other, "legacy");
        }
        assertThat(hostile).contains("--comment \"gatun owner=evil%20-j%20ACCEPT%20--comment%20x\"");
        String bridgeMacFree = hostile.replace("evil%20-j%20ACCEPT%20--comment%20x", "clean");
        assertThat(bridgeMacFree).isEqualTo(clean);
        try (GatunDriver gatun = Gatun.open(host, "iptables-legacy")) {
            assertThat(gatun.published("n1")).singleElement().extracting(PortMapping::owner)
                    .isEqualTo("evil -j ACCEPT --comment x");
        }
    }

    @Test
    void switchingDriversLeavesNoRuleOfTheFirst(NetworkNamespace host) {
        try (GatunDriver nft = Gatun.open(host, "nftables")) {
            nft.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            nft.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), null));
            nft.unpublish(new PortRequest("n1", C1, List.of(), null));
            nft.deleteNetwork("n1", false);
        }
        assertThat(Oracle.in(host, "nft", "list", "ruleset")).doesNotContain("gatun");
        try (GatunDriver legacy = Gatun.open(host, "iptables-legacy")) {
            legacy.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            legacy.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), null));
            assertThat(IptablesState.of(host, "legacy")).contains("GATUN-DNAT");
            legacy.unpublish(new PortRequest("n1", C1, List.of(), null));
            legacy.deleteNetwork("n1", false);
        }
        assertThat(IptablesState.of(host, "legacy")).doesNotContain("GATUN");
        assertThat(Oracle.in(host, "nft", "list", "ruleset")).doesNotContain("gatun");
        try (GatunDriver nft = Gatun.open(host, "nftables")) {
            nft.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            nft.publish(new PortRequest("n1", C1, List.of(PortSpec.parse("8080:80")), null));
            assertThat(nft.published("n1")).hasSize(1);
        }
        assertThat(IptablesState.of(host, "legacy")).doesNotContain("GATUN");
    }
}
