package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Daemons.Result;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A real firewalld (Debian's, nftables backend) inside a network namespace of the test's, on a
 * private D-Bus system bus, with all of its state in one directory of the test's: so that gatun
 * can be tested next to firewalld without a firewalld, or a system bus, on the host.
 *
 * <pre>{@code
 * try (Firewalld fw = Firewalld.start(host, tempDir)) {
 *     fw.firewallCmdOk("--zone=trusted", "--add-interface=gt-test");
 * }
 * }</pre>
 *
 * <p>How: a {@code dbus-daemon} of type system listening on {@code DIR/bus} with the policy
 * files of /usr/share/dbus-1/system.d and /etc/dbus-1/system.d (firewalld's FirewallD.conf lets
 * root own its name), no service activation and no polkit (firewalld then authorises callers by
 * uid 0). Then {@code firewalld --nofork --nopid --system-config DIR/etc --default-config
 * /usr/lib/firewalld --log-target file --log-file DIR/firewalld.log} with
 * DBUS_SYSTEM_BUS_ADDRESS set, entered into the namespace with {@code nsenter --net} (not
 * {@code ip netns exec}, which remounts /sys) and into a private mount namespace whose /run is
 * {@code DIR/run}: firewalld creates /run/firewalld for the temporary files it feeds
 * iptables-restore and ebtables-restore, and would otherwise leave that directory on the host;
 * the private /run also hides the host's system bus socket from it. Its iptables, ip6tables and
 * ebtables calls (it runs them even with the nftables backend) run in the namespace too.
 * What firewalld still does outside the namespace: nothing written, as strace shows; kernel
 * modules it or nft may load are global.
 *
 * <p>Both daemons run as children of this JVM and stop on {@link #close()} (SIGTERM, then
 * SIGKILL after a bounded wait). Starting both takes about 0.3 s until firewalld reports
 * RUNNING; stopping takes 0.05-0.2 s (with the default CleanupOnExit=yes firewalld deletes its
 * table as it goes). A firewall-cmd call takes 0.15-0.3 s, nearly all of it Python starting.
 *
 * <p>Needs root, firewalld, firewall-cmd, dbus-daemon, dbus-send, nsenter and unshare; without
 * them {@link #start} skips the test, except with CI=true, where it fails. Never run
 * {@code --complete-reload}: it unloads the host's netfilter kernel modules; {@link #firewallCmd}
 * refuses it.
 */
public final class Firewalld implements AutoCloseable {

    /** firewalld.conf as Debian ships it; {@link #start(NetworkNamespace, Path, Map)} overrides keys. */
    public static final Map<String, String> DEFAULT_SETTINGS = defaults();

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);
    private static final List<String> TOOLS = List.of("firewalld", "firewall-cmd", "dbus-daemon", "dbus-send", "nsenter",
            "unshare", "mount", "sh");
    /** Unix socket paths end at 107 bytes. */
    private static final int MAX_SOCKET_PATH = 100;

    private final NetworkNamespace ns;
    private final Path dir;
    private final String busAddress;
    private Process dbus;
    private Process firewalld;
    private Duration startedIn = Duration.ZERO;

    private Firewalld(NetworkNamespace ns, Path dir) {
        this.ns = ns;
        this.dir = dir.toAbsolutePath();
        this.busAddress = "unix:path=" + this.dir.resolve("bus");
    }

    private static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("DefaultZone", "public");
        m.put("CleanupOnExit", "yes");
        m.put("CleanupModulesOnExit", "no");
        m.put("Lockdown", "no");
        m.put("IPv6_rpfilter", "yes");
        m.put("IndividualCalls", "no");
        m.put("LogDenied", "off");
        m.put("FirewallBackend", "nftables");
        m.put("FlushAllOnReload", "yes");
        m.put("RFC3964_IPv4", "yes");
        return Map.copyOf(m);
    }

    // ---- availability -------------------------------------------------------------------

    /** True when every tool the fixture runs is installed (privileges are not checked). */
    public static boolean installed() {
        return missing().isEmpty();
    }

    /** Skips the calling test, or with CI=true fails it, unless root and everything is installed. */
    public static void requireAvailable() {
        FreshNamespaces.requirePrivileges();
        List<String> missing = missing();
        if (missing.isEmpty()) {
            return;
        }
        String why = "the firewalld fixture needs " + String.join(", ", missing)
                + " (install them with ci/setup, or apt-get install firewalld)";
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(why + "; with CI=true it fails instead of skipping");
        }
        Assumptions.abort(why);
    }

    private static List<String> missing() {
        return TOOLS.stream().filter(t -> Daemons.tool(t).isEmpty()).toList();
    }

    // ---- start --------------------------------------------------------------------------

    /** Starts a private system bus and firewalld with Debian's settings in {@code ns}; state in {@code dir}. */
    public static Firewalld start(NetworkNamespace ns, Path dir) {
        return start(ns, dir, Map.of());
    }

    /**
     * As {@link #start(NetworkNamespace, Path)}, with firewalld.conf keys overridden, for example
     * {@code Map.of("FlushAllOnReload", "no")}.
     */
    public static Firewalld start(NetworkNamespace ns, Path dir, Map<String, String> settings) {
        requireAvailable();
        if ("yes".equalsIgnoreCase(settings.get("CleanupModulesOnExit"))) {
            throw new IllegalArgumentException("CleanupModulesOnExit=yes would unload the host's netfilter modules");
        }
        Firewalld fw = new Firewalld(ns, dir);
        if (fw.dir.resolve("bus").toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH) {
            throw new IllegalArgumentException("directory " + fw.dir + " is too long for a unix socket path in it");
        }
        try {
            fw.prepare(settings);
            long t0 = System.nanoTime();
            fw.startBus();
            fw.startFirewalld();
            fw.startedIn = Duration.ofNanos(System.nanoTime() - t0);
            return fw;
        } catch (RuntimeException | Error e) {
            try {
                fw.close();
            } catch (RuntimeException | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void prepare(Map<String, String> settings) {
        Map<String, String> conf = new LinkedHashMap<>(DEFAULT_SETTINGS);
        conf.putAll(settings);
        StringBuilder text = new StringBuilder("# written by dev.gatun.testing.Firewalld\n");
        conf.forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        try {
            Files.createDirectories(dir.resolve("etc"));
            Files.createDirectories(dir.resolve("run"));
            Files.writeString(dir.resolve("etc/firewalld.conf"), text);
            Files.writeString(dir.resolve("bus.conf"), busConfig());
            Files.deleteIfExists(dir.resolve("bus")); // a stale socket would read as ready
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The stock system bus policy (/usr/share/dbus-1/system.conf) without its user, pid file,
     * syslog, service activation and listen address.
     */
    private String busConfig() {
        return """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>system</type>
                  <listen>%s</listen>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    <allow user="*"/>
                    <deny own="*"/>
                    <deny send_type="method_call"/>
                    <allow send_type="signal"/>
                    <allow send_requested_reply="true" send_type="method_return"/>
                    <allow send_requested_reply="true" send_type="error"/>
                    <allow receive_type="method_call"/>
                    <allow receive_type="method_return"/>
                    <allow receive_type="error"/>
                    <allow receive_type="signal"/>
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
                  </policy>
                  <policy user="root">
                    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
                  </policy>
                  <includedir>/usr/share/dbus-1/system.d</includedir>
                  <includedir>/etc/dbus-1/system.d</includedir>
                </busconfig>
                """.formatted(xml(busAddress));
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    private void startBus() {
        Path socket = dir.resolve("bus");
        dbus = daemon(dir.resolve("dbus.log"), Daemons.toolPath("nsenter"), "--net=" + ns.path(), "--",
                Daemons.toolPath("dbus-daemon"), "--config-file", dir.resolve("bus.conf").toString(), "--nofork", "--nopidfile");
        waitFor("dbus-daemon", () -> Files.exists(socket), dbus);
    }

    private void startFirewalld() {
        // nsenter first (it opens the namespace file, which the private /run would hide), then a
        // private mount namespace whose /run is ours; sh only mounts and execs, the arguments are
        // positional, never parsed.
        firewalld = daemon(dir.resolve("firewalld.out"), Daemons.toolPath("nsenter"), "--net=" + ns.path(), "--",
                Daemons.toolPath("unshare"), "--mount", "--propagation", "private", "--",
                Daemons.toolPath("sh"), "-c", "mount --bind \"$0\" /run && exec \"$@\"", dir.resolve("run").toString(),
                Daemons.toolPath("firewalld"), "--nofork", "--nopid",
                "--system-config", dir.resolve("etc").toString(),
                "--default-config", "/usr/lib/firewalld",
                "--log-target", "file", "--log-file", dir.resolve("firewalld.log").toString());
        waitFor("firewalld", this::running, firewalld);
    }

    /** firewalld owns its name and its state property reads RUNNING (it does once its rules are in). */
    private boolean running() {
        Result r = run(List.of(Daemons.toolPath("dbus-send"), "--system", "--print-reply=literal", "--reply-timeout=5000",
                "--dest=org.fedoraproject.FirewallD1", "/org/fedoraproject/FirewallD1",
                "org.freedesktop.DBus.Properties.Get", "string:org.fedoraproject.FirewallD1", "string:state"));
        return r.exitCode() == 0 && r.stdout().contains("RUNNING");
    }

    private Process daemon(Path log, String... command) {
        return Daemons.start(List.of(command), log, true, this::environment);
    }

    private void waitFor(String what, Daemons.Check ready, Process process) {
        Daemons.awaitReady(what + " in " + ns, ready, process, START_TIMEOUT, this::tails);
    }

    // ---- use ----------------------------------------------------------------------------

    /** The DBUS_SYSTEM_BUS_ADDRESS of this firewalld's bus: {@code unix:path=DIR/bus}. */
    public String busAddress() {
        return busAddress;
    }

    /** The namespace firewalld programs. */
    public NetworkNamespace namespace() {
        return ns;
    }

    /** The directory with all of firewalld's state: etc/ (its system config), run/, the logs. */
    public Path dir() {
        return dir;
    }

    /** How long the last start took, from starting dbus-daemon until firewalld reported RUNNING. */
    public Duration startedIn() {
        return startedIn;
    }

    /**
     * Runs firewall-cmd with these arguments (an array, no shell) against this firewalld and
     * returns its exit code and output; fails after a bounded wait. firewall-cmd only talks D-Bus
     * over the bus socket, so the namespace it runs in does not matter; it runs in firewalld's.
     */
    public Result firewallCmd(String... args) {
        for (String a : args) {
            if (a.equals("--complete-reload")) {
                throw new IllegalArgumentException("--complete-reload unloads the host's netfilter kernel modules");
            }
        }
        List<String> cmd = new ArrayList<>(List.of(Daemons.toolPath("nsenter"), "--net=" + ns.path(), "--", Daemons.toolPath("firewall-cmd")));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    /** {@link #firewallCmd}, failing the test unless it exits 0. */
    public Result firewallCmdOk(String... args) {
        Result r = firewallCmd(args);
        if (r.exitCode() != 0) {
            throw new AssertionError("firewall-cmd " + String.join(" ", args) + ": " + r);
        }
        return r;
    }

    /** Stops firewalld as its service would (SIGTERM) and starts it again on the same bus and settings. */
    public void restart() {
        stop(firewalld, "firewalld");
        long t0 = System.nanoTime();
        startFirewalld();
        startedIn = Duration.ofNanos(System.nanoTime() - t0);
    }

    /** The process ids of firewalld and dbus-daemon, in this order, of those that run. */
    public List<Long> pids() {
        return Stream.of(firewalld, dbus).filter(p -> p != null && p.isAlive()).map(Process::pid).toList();
    }

    /** The end of firewalld's log and output, and of dbus-daemon's, for failure messages. */
    public String tails() {
        return "firewalld.log:\n" + Daemons.tail(dir.resolve("firewalld.log")) + "\nfirewalld.out:\n"
                + Daemons.tail(dir.resolve("firewalld.out")) + "\ndbus.log:\n" + Daemons.tail(dir.resolve("dbus.log"));
    }

    // ---- close --------------------------------------------------------------------------

    /**
     * Stops firewalld, then the bus (SIGTERM, then SIGKILL after a bounded wait), and kills any
     * process left that names this fixture's directory. Fails when something had to be killed.
     */
    @Override
    public void close() {
        List<Throwable> failures = new ArrayList<>();
        for (Runnable step : List.<Runnable>of(() -> stop(firewalld, "firewalld"), () -> stop(dbus, "dbus-daemon"),
                this::killLeftovers)) {
            try {
                step.run();
            } catch (RuntimeException | AssertionError e) {
                failures.add(e);
            }
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("firewalld fixture in " + dir + " did not stop cleanly: "
                    + failures.getFirst().getMessage(), failures.getFirst());
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    private static void stop(Process p, String what) {
        Daemons.stop(p, what, STOP_TIMEOUT);
    }

    /** Kills what still names this fixture's directory (the daemons, or anything they left), failing if anything did. */
    private void killLeftovers() {
        Daemons.killLeftovers(Daemons.naming(dir), "the firewalld fixture");
    }

    // ---- processes ----------------------------------------------------------------------

    /** The children see this fixture's bus, and no session bus or service manager of the caller. */
    private void environment(Map<String, String> env) {
        env.keySet().removeIf(k -> k.startsWith("DBUS_") || k.equals("NOTIFY_SOCKET") || k.startsWith("LISTEN_"));
        env.put("DBUS_SYSTEM_BUS_ADDRESS", busAddress);
    }

    private Result run(List<String> cmd) {
        return Daemons.run(cmd, this::environment, COMMAND_TIMEOUT);
    }

    @Override
    public String toString() {
        return "firewalld in " + ns + " on " + busAddress;
    }
}
