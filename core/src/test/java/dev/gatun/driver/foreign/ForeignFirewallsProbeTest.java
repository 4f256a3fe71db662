package dev.gatun.driver.foreign;

import dev.gatun.netns.Tool;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backstop opens other firewalls every few seconds: on a host where a variant of iptables
 * has no filter table it must not start that variant's tools (four processes each time, for
 * nothing), and where one appears it must read it and open it as before. The tools run
 * through wrappers that log each start, so the test sees what ran.
 */
@ExtendWith(FreshNamespaces.class)
class ForeignFirewallsProbeTest {

    private static final List<String> TOOLS = List.of("iptables-legacy-save", "ip6tables-legacy-save",
            "iptables-nft-save", "ip6tables-nft-save", "iptables-legacy-restore", "ip6tables-legacy-restore",
            "iptables-nft-restore", "ip6tables-nft-restore");

    @Test
    void theKernelsListOfLegacyTablesFollowsTheirUse(NetworkNamespace host) {
        assertThat(LegacyTables.hasFilter(host, false)).as("a fresh namespace").isFalse();
        assertThat(LegacyTables.hasFilter(host, true)).as("a fresh namespace, v6").isFalse();
        Oracle.in(host, "iptables-legacy", "-w", "-L", "FORWARD");
        assertThat(LegacyTables.hasFilter(host, false)).as("after iptables-legacy -L").isTrue();
        assertThat(LegacyTables.hasFilter(host, true)).as("v6 is its own list").isFalse();
        Oracle.in(host, "ip6tables-legacy", "-w", "-L", "FORWARD");
        assertThat(LegacyTables.hasFilter(host, true)).as("after ip6tables-legacy -L").isTrue();
    }

    @Test
    void noFilterTableMeansNoToolStarted(NetworkNamespace host, @TempDir Path dir) throws IOException {
        Path log = dir.resolve("started");
        ForeignFirewalls firewalls = ForeignFirewalls.of(loggingTool(host, dir, log), "gatun", 0, 0x1000, null);

        ForeignFirewalls.Opened opened = firewalls.open(List.of("gt-probe"));
        assertThat(opened.failures()).isEmpty();
        assertThat(opened.changed()).isEmpty();
        firewalls.survey(List.of("gt-probe"));
        assertThat(started(log)).as("tools started on a host without iptables filter tables").isEmpty();

        // The positive control: a legacy FORWARD policy DROP is read and opened as before.
        Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
        opened = firewalls.open(List.of("gt-probe"));
        assertThat(opened.failures()).isEmpty();
        assertThat(opened.changed()).singleElement().asString().contains("iptables-legacy");
        assertThat(started(log)).containsOnly("iptables-legacy-save", "iptables-legacy-restore");
        assertThat(Oracle.in(host, "iptables-legacy-save")).contains("-A GATUN-ALLOW -i gt-probe -j ACCEPT");

        // And the nft variant once its filter table exists: read and written over netlink, no tool started.
        Files.writeString(log, "");
        Oracle.in(host, "iptables-nft", "-w", "-P", "FORWARD", "DROP");
        opened = firewalls.open(List.of("gt-probe"));
        assertThat(opened.failures()).isEmpty();
        assertThat(opened.changed()).singleElement().asString().contains("iptables-nft");
        firewalls.survey(List.of("gt-probe"));
        assertThat(started(log)).as("tools started for iptables-nft (the legacy table is still there)")
                .isNotEmpty().allMatch(t -> t.startsWith("iptables-legacy-"));
        assertThat(Oracle.in(host, "iptables-nft-save")).contains("-A GATUN-ALLOW -i gt-probe -j ACCEPT");
    }

    /** A tool whose PATH starts with wrappers of the -save and -restore programs that log their name to {@code log}. */
    private static Tool loggingTool(NetworkNamespace host, Path dir, Path log) throws IOException {
        Path bin = Files.createDirectory(dir.resolve("bin"));
        Files.writeString(log, "");
        for (String program : TOOLS) {
            Path real = Path.of("/usr/sbin", program);
            assertThat(real).as("the real " + program).isExecutable();
            Path wrapper = bin.resolve(program);
            Files.writeString(wrapper, "#!/bin/sh\necho " + program + " >> " + log + "\nexec " + real + " \"$@\"\n");
            Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
        }
        return new Tool(host, bin + ":/usr/sbin:/usr/bin:/sbin:/bin", Duration.ofSeconds(60));
    }

    private static List<String> started(Path log) throws IOException {
        return Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList();
    }
}
