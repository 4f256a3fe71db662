package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Rtnetlink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** firewalld runs inside the test's namespace on a private bus, answers firewall-cmd, and goes away. */
@ExtendWith(FreshNamespaces.class)
class FirewalldFixtureTest {

    @Test
    void runsInTheNamespaceOnlyAndLeavesNothingBehind(NetworkNamespace host, @TempDir Path dir) {
        Firewalld.requireAvailable();
        String hostTables = Oracle.host("nft", "list", "tables");
        boolean hostRunDir = Files.exists(Path.of("/run/firewalld"));
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createBridge("gt-fw0", null, null);
        }

        List<Long> pids;
        try (Firewalld fw = Firewalld.start(host, dir)) {
            pids = fw.pids();
            assertThat(pids).hasSize(2);
            assertThat(pids).allSatisfy(pid -> assertThat(netnsOf(pid)).isEqualTo("net:[" + host.inode() + "]"));
            assertThat(fw.busAddress()).isEqualTo("unix:path=" + dir.toAbsolutePath().resolve("bus"));

            assertThat(Oracle.in(host, "nft", "list", "tables")).contains("table inet firewalld");
            assertThat(Oracle.host("nft", "list", "tables")).isEqualTo(hostTables);
            // Its temporary files went to the fixture's /run, not the host's.
            assertThat(dir.resolve("run/firewalld")).isDirectory();
            assertThat(Files.exists(Path.of("/run/firewalld"))).isEqualTo(hostRunDir);

            assertThat(fw.firewallCmd("--state")).isEqualTo(new Daemons.Result(0, "running\n", ""));
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gt-fw0")).isEqualTo(new Daemons.Result(1, "no\n", ""));
            assertThat(fw.firewallCmd("--zone=trusted", "--add-interface=gt-fw0")).isEqualTo(new Daemons.Result(0, "success\n", ""));
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gt-fw0")).isEqualTo(new Daemons.Result(0, "yes\n", ""));
            assertThat(fw.firewallCmdOk("--get-zone-of-interface=gt-fw0").stdout()).isEqualTo("trusted\n");
            assertThat(Oracle.in(host, "nft", "list", "chain", "inet", "firewalld", "filter_FORWARD_ZONES"))
                    .contains("iifname \"gt-fw0\" goto filter_FWD_trusted");

            assertThat(fw.firewallCmd("--zone=trusted", "--remove-interface=gt-fw0")).isEqualTo(new Daemons.Result(0, "success\n", ""));
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gt-fw0")).isEqualTo(new Daemons.Result(1, "no\n", ""));
            assertThat(Oracle.in(host, "nft", "list", "ruleset")).doesNotContain("gt-fw0");
        }

        assertThat(pids).allSatisfy(pid -> assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty());
        assertThat(processesIn(host)).isEmpty();
        // CleanupOnExit=yes: firewalld takes its table with it; dbus-daemon removes its socket.
        assertThat(Oracle.in(host, "nft", "list", "tables")).doesNotContain("firewalld");
        assertThat(dir.resolve("bus")).doesNotExist();
        assertThat(Oracle.host("nft", "list", "tables")).isEqualTo(hostTables);
        assertThat(Files.exists(Path.of("/run/firewalld"))).isEqualTo(hostRunDir);
    }

    @Test
    void reloadAndRestartDropRuntimeInterfaces(NetworkNamespace host, @TempDir Path dir) {
        Firewalld.requireAvailable();
        try (Firewalld fw = Firewalld.start(host, dir)) {
            fw.firewallCmdOk("--zone=trusted", "--add-interface=gt-fw0"); // need not exist
            assertThat(fw.firewallCmd("--zone=trusted", "--add-interface=gt-fw0"))
                    .isEqualTo(new Daemons.Result(0, "success\n", "Warning: ZONE_ALREADY_SET: 'gt-fw0' already bound to 'trusted'\n"));

            fw.firewallCmdOk("--reload"); // FlushAllOnReload=yes, Debian's default
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gt-fw0").stdout()).isEqualTo("no\n");

            fw.firewallCmdOk("--zone=trusted", "--add-interface=gt-fw0");
            long before = fw.pids().getFirst();
            fw.restart();
            assertThat(fw.pids().getFirst()).isNotEqualTo(before);
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gt-fw0").stdout()).isEqualTo("no\n");
            assertThat(Oracle.in(host, "nft", "list", "tables")).contains("table inet firewalld");
        }
        assertThat(processesIn(host)).isEmpty();
    }

    private static String netnsOf(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "net")).toString();
        } catch (IOException e) {
            return "(gone)";
        }
    }

    /** Every process whose network namespace is {@code ns}. */
    private static List<String> processesIn(NetworkNamespace ns) {
        String link = "net:[" + ns.inode() + "]";
        try (Stream<ProcessHandle> all = ProcessHandle.allProcesses()) {
            return all.filter(ph -> link.equals(netnsOf(ph.pid())))
                    .map(ph -> ph.pid() + " " + ph.info().commandLine().orElse("?")).toList();
        }
    }
}
