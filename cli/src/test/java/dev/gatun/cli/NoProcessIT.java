package dev.gatun.cli;

import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.Firewalld;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Tracing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README.md: "Every change is one atomic nftables transaction, so ... no process runs (one
 * exception: a legacy iptables FORWARD drop ...)". Each command is run under {@code strace -f -e
 * trace=execve}: the launcher starts what it starts (a shell, the C client, its checks, java);
 * from the moment the command's JVM is exec'd nothing else may be. The serve is traced from its
 * ready line on.
 */
@ExtendWith(FreshNamespaces.class)
class NoProcessIT {

    /** {@code PID SECONDS execve("PATH", ...) = 0}, as {@code strace -f -ttt} writes a successful exec. */
    private static final Pattern EXEC = Pattern.compile("^(\\d+)\\s+[\\d.]+\\s+execve\\(\"([^\"]+)\".*= 0$");
    private static final Duration REPAIR = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    /** The per-container commands through the JVM path (no serve) on a host with no other firewall. */
    @Test
    void theJvmPathStartsNoProcess(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        String ns = host.name();
        for (List<String> command : perContainerCommands(c1)) {
            List<String> args = new ArrayList<>(List.of("--netns", ns));
            args.addAll(command);
            Traced t = traced(args);
            assertThat(t.run().code()).as("%s: %s", args, t.run().err()).isZero();
            assertThat(t.launched()).as("the launcher started java for %s", args).anyMatch(p -> p.endsWith("/bin/java"));
            assertThat(t.afterJava()).as("processes started by gatun %s", String.join(" ", command)).isEmpty();
        }
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).doesNotContain("gatun-n1");
    }

    /**
     * On a firewalld host (Debian's firewalld in the test's namespace, on a private system bus
     * that DBUS_SYSTEM_BUS_ADDRESS names, as on a host whose bus is elsewhere): the bridge goes
     * into firewalld's trusted zone over D-Bus and out again, and no firewall-cmd, nor anything
     * else, is exec'd after java. The positive control: firewall-cmd sees the bridge in the zone
     * between the network's create and its removal.
     */
    @Test
    void onAFirewalldHostTheJvmPathStartsNoProcess(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        try (Firewalld fw = Firewalld.start(host, tmp.resolve("firewalld"))) {
            Map<String, String> bus = Map.of("DBUS_SYSTEM_BUS_ADDRESS", fw.busAddress());
            for (List<String> command : perContainerCommands(c1)) {
                List<String> args = new ArrayList<>(List.of("--netns", host.name()));
                args.addAll(command);
                Traced t = traced(args, bus);
                assertThat(t.run().code()).as("%s: %s", args, t.run().err()).isZero();
                assertThat(t.launched()).as("the launcher started java for %s", args).anyMatch(p -> p.endsWith("/bin/java"));
                assertThat(t.afterJava()).as("processes started by gatun %s", String.join(" ", command)).isEmpty();
                if (command.equals(List.of("attach", "n1", c1.name()))) {
                    assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gatun-n1").stdout())
                            .as("the bridge in firewalld's trusted zone").isEqualTo("yes\n");
                }
            }
            assertThat(fw.firewallCmd("--zone=trusted", "--query-interface=gatun-n1").stdout())
                    .as("the bridge out of the zone with its network").isEqualTo("no\n");
        }
    }

    /**
     * The one exception, exactly: with a legacy iptables FORWARD policy DROP, the JVM path reads
     * the legacy filter table with iptables-legacy-save and opens the drop with
     * iptables-legacy-restore, each run inside the namespace through nsenter; nothing else.
     */
    @Test
    void aLegacyForwardDropIsOpenedWithIptablesLegacyRestoreAndNothingElse(NetworkNamespace host) throws Exception {
        String ns = host.name();
        Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
        List<String> started = new ArrayList<>();
        for (List<String> command : List.of(List.of("net", "create", "n1", "--subnet", "10.88.0.0/16"), List.of("net", "rm", "n1"))) {
            List<String> args = new ArrayList<>(List.of("--netns", ns));
            args.addAll(command);
            Traced t = traced(args);
            assertThat(t.run().code()).as("%s: %s", args, t.run().err()).isZero();
            started.addAll(t.afterJava().stream().map(p -> p.substring(p.lastIndexOf('/') + 1)).toList());
            if (command.get(1).equals("create")) {
                assertThat(Oracle.in(host, "iptables-legacy-save", "-t", "filter")).contains("-A FORWARD -j GATUN-ALLOW");
            }
        }
        assertThat(started).as("programs gatun started").contains("iptables-legacy-restore")
                .containsOnly("nsenter", "iptables-legacy-save", "iptables-legacy-restore");
        assertThat(Oracle.in(host, "iptables-legacy-save", "-t", "filter")).doesNotContain("GATUN");
    }

    /**
     * A serve, traced from its ready line: the same commands through it (the C client) and a
     * repair after {@code nft flush ruleset} start no process. The control: the trace sees the
     * serve's netlink writes.
     */
    @Test
    void aServeStartsNoProcessForCommandsOrARepair(NetworkNamespace host, NetworkNamespace c1) throws Exception {
        String ns = host.name();
        Path trace = tmp.resolve("serve.strace");
        try (GatunServe serve = GatunServe.start(ns)) {
            Process strace = new ProcessBuilder("strace", "-f", "-qq", "-ttt", "-e", "trace=execve,sendto,sendmsg", "-o",
                    trace.toString(), "-p", Long.toString(serve.pid())).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            try {
                assertThat(Bounded.eventually(Duration.ofSeconds(30), () -> Tracing.everyThreadTraced(serve.pid(), strace.pid())))
                        .as("strace attached to every thread of the serve").isTrue();
                List<List<String>> commands = perContainerCommands(c1);
                for (List<String> command : commands.subList(0, 3)) { // up to the publish
                    List<String> args = new ArrayList<>(List.of("--netns", ns));
                    args.addAll(command);
                    GatunCli.ok(args.toArray(String[]::new));
                }
                int mark = serve.stderrMark();
                Oracle.in(host, "nft", "flush", "ruleset");
                assertThat(serve.awaitStderr(mark, "repaired", REPAIR)).as("the serve repaired the flush: %s", serve.stderr())
                        .isTrue();
                assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains("8080");
                for (List<String> command : commands.subList(3, commands.size())) {
                    List<String> args = new ArrayList<>(List.of("--netns", ns));
                    args.addAll(command);
                    GatunCli.ok(args.toArray(String[]::new));
                }
            } finally {
                strace.destroy();
                strace.waitFor();
            }
            String traced = Files.readString(trace);
            assertThat(traced).as("the trace sees the serve's netlink writes").containsPattern("send(to|msg)\\(");
            assertThat(traced.lines().filter(l -> l.contains("execve(")).toList()).as("processes the serve started").isEmpty();
        }
    }

    /**
     * The same exception in a serve: on a host with a legacy FORWARD drop, a network made and
     * removed through it, and its check of the legacy table (every five seconds while that table
     * exists), run nsenter, iptables-legacy-save and iptables-legacy-restore and nothing else.
     */
    @Test
    void aServeOnALegacyForwardDropHostRunsOnlyTheLegacyTools(NetworkNamespace host) throws Exception {
        String ns = host.name();
        Oracle.in(host, "iptables-legacy", "-w", "-P", "FORWARD", "DROP");
        Path trace = tmp.resolve("serve-legacy.strace");
        try (GatunServe serve = GatunServe.start(ns)) {
            Process strace = new ProcessBuilder("strace", "-f", "-qq", "-ttt", "-e", "trace=execve", "-o",
                    trace.toString(), "-p", Long.toString(serve.pid())).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            try {
                assertThat(Bounded.eventually(Duration.ofSeconds(30), () -> Tracing.everyThreadTraced(serve.pid(), strace.pid())))
                        .as("strace attached to every thread of the serve").isTrue();
                GatunCli.ok("--netns", ns, "net", "create", "n1", "--subnet", "10.88.0.0/16");
                assertThat(Oracle.in(host, "iptables-legacy-save", "-t", "filter")).contains("-A FORWARD -j GATUN-ALLOW");
                // The check of the legacy table: a save after the create's own, within its five seconds.
                assertThat(Bounded.eventually(Duration.ofSeconds(15), () -> programs(trace).stream()
                        .filter(p -> p.equals("iptables-legacy-save")).count() >= 2)).as("the serve checked the legacy table again")
                        .isTrue();
                GatunCli.ok("--netns", ns, "net", "rm", "n1");
                assertThat(Oracle.in(host, "iptables-legacy-save", "-t", "filter")).doesNotContain("GATUN");
            } finally {
                strace.destroy();
                strace.waitFor();
            }
            assertThat(programs(trace)).as("programs the serve started").contains("iptables-legacy-restore")
                    .containsOnly("nsenter", "iptables-legacy-save", "iptables-legacy-restore");
        }
    }

    /** The programs a trace shows exec'd, by name, the JDK's jspawnhelper left out (it execs each of them). */
    private static List<String> programs(Path trace) {
        try {
            return Files.readAllLines(trace).stream().map(EXEC::matcher).filter(Matcher::matches).map(m -> m.group(2))
                    .filter(p -> !p.endsWith("/jspawnhelper")).map(p -> p.substring(p.lastIndexOf('/') + 1)).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** net create, attach, publish, ls, unpublish, detach, net rm: what a container's life asks of gatun. */
    private static List<List<String>> perContainerCommands(NetworkNamespace c1) {
        return List.of(List.of("net", "create", "n1", "--subnet", "10.88.0.0/16"), List.of("attach", "n1", c1.name()),
                List.of("publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "5353:53/udp"), List.of("ls"),
                List.of("unpublish", "n1", "10.88.0.2"), List.of("detach", "n1", c1.name()), List.of("net", "rm", "n1"));
    }

    /** One successful execve of a trace: the process and the program. */
    private record Exec(long pid, String path) {}

    /** A command's run, and the programs exec'd under it, in order. */
    private record Traced(GatunCli.Run run, List<Exec> execs) {
        List<String> launched() {
            return execs.stream().map(Exec::path).toList();
        }

        /**
         * What was exec'd after the command's own JVM: the last java the launcher's process
         * (the first one traced: it execs the client, the shell again and at last java) became.
         * A launcher's first use may run other JVMs before it (its build's AOT training); what
         * comes after is what gatun itself started. Each process the JVM starts shows as the
         * JDK's jspawnhelper exec'ing the program: jspawnhelper is left out, its program kept.
         */
        List<String> afterJava() {
            if (execs.isEmpty()) {
                return List.of();
            }
            long launcher = execs.getFirst().pid();
            int java = -1;
            for (int i = 0; i < execs.size(); i++) {
                if (execs.get(i).pid() == launcher && execs.get(i).path().endsWith("/bin/java")) {
                    java = i;
                }
            }
            return java < 0 ? List.of() : execs.subList(java + 1, execs.size()).stream().map(Exec::path)
                    .filter(p -> !p.endsWith("/jspawnhelper")).toList();
        }
    }

    /** {@code ./gatun args} under {@code strace -f -e trace=execve} (seccomp-filtered, so the JVM runs at speed). */
    private Traced traced(List<String> args) throws IOException {
        return traced(args, Map.of());
    }

    /** As {@link #traced(List)}, with {@code env} added to the command's environment. */
    private Traced traced(List<String> args, Map<String, String> env) throws IOException {
        Path trace = Files.createTempFile(tmp, "cmd", ".strace");
        List<String> cmd = new ArrayList<>(List.of("strace", "-f", "-qq", "-ttt", "--seccomp-bpf", "-e", "trace=execve",
                "-o", trace.toString(), GatunCli.ROOT.resolve("gatun").toString()));
        cmd.addAll(args);
        GatunCli.Run run = GatunCli.runProgram(cmd, env);
        List<Exec> execs = new ArrayList<>();
        for (String line : Files.readAllLines(trace)) {
            Matcher m = EXEC.matcher(line);
            if (m.matches()) {
                execs.add(new Exec(Long.parseLong(m.group(1)), m.group(2)));
            }
        }
        return new Traced(run, execs);
    }
}
