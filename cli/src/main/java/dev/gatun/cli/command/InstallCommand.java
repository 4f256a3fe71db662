package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.host.Installation;
import dev.gatun.cli.host.RuntimeLayout;
import dev.gatun.cli.host.ServeCache;
import dev.gatun.cli.host.ServiceUnit;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.host.Systemctl;
import dev.gatun.cli.http.UnixSockets;
import dev.gatun.netns.NetworkNamespace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Installs gatun on this host: the runtime under a prefix, the gatun command, the service unit, the engines' entry points. */
@Command(name = "install", mixinStandardHelpOptions = true,
        description = {"Install gatun on this host from this checkout (or installation): PREFIX/lib/gatun (launcher, "
                + "jar), PREFIX/bin/gatun (the C client: the gatun command, which forwards to the running serve and "
                + "starts a JVM only when none answers), and gatun.service, one serve for the host's network namespace "
                + "(Type=notify, Restart=on-failure, ordered before docker.service and containerd.service). As root it "
                + "also makes the serve's ahead-of-time cache (some seconds), which the unit's serve cannot write itself.",
                "Writes nothing until every path is free or gatun's, and lists what it wrote in "
                        + "PREFIX/lib/gatun/installed for gatun uninstall. Running it again replaces what changed and "
                        + "keeps the parts asked for before (a CNI link, say). Does not start the service: systemctl "
                        + "enable --now gatun does."},
        footer = {"", "Examples:", "  gatun install", "  gatun install --cni-bin-dir /opt/cni/bin \\",
                "      --netavark-plugin-dir /usr/local/libexec/netavark",
                "  gatun install --prefix /opt/gatun --no-systemd",
                "", "Exit codes: 3 when a path is taken by a file that is not gatun's (nothing is",
                "written); 4 when the runtime to install is incomplete (build it first:",
                "./gatun --version)."})
final class InstallCommand extends Base {

    @Option(names = "--prefix", paramLabel = "DIR", description = "Where the runtime goes (default: /usr/local).")
    Path prefix = Path.of("/usr/local");

    @Option(names = "--unit-dir", paramLabel = "DIR", description = "Where gatun.service goes (default: /etc/systemd/system).")
    Path unitDir = Path.of("/etc/systemd/system");

    @Option(names = "--no-systemd", description = "Write no service unit.")
    boolean noSystemd;

    @Option(names = "--cni-bin-dir", paramLabel = "DIR",
            description = "Also make the CNI plugin link DIR/gatun to the installed gatun command (as gatun cni install).")
    Path cniBinDir;

    @Option(names = "--netavark-plugin-dir", paramLabel = "DIR",
            description = "Also write the netavark plugin file DIR/gatun running the installed command (as gatun netavark install).")
    Path netavarkPluginDir;

    @Override
    public Integer call() {
        Installation.Target target = new Installation.Target(prefix, noSystemd ? null : unitDir, cniBinDir,
                netavarkPluginDir);
        List<Installation.Step> steps = new ArrayList<>(Installation.install(RuntimeLayout.ofThisProcess("install"),
                target));
        List<String> notes = new ArrayList<>();
        Installation.Step cache = ServeCache.train(target);
        if (cache != null) {
            steps.add(cache);
        } else {
            notes.add("the serve's ahead-of-time cache could not be made (it needs root and nf_tables); the serve "
                    + "starts without it, a little slower on its first requests");
        }
        Path unit = noSystemd ? null : target.unitDir().resolve(ServiceUnit.NAME);
        boolean unitChanged = steps.stream().anyMatch(s -> s.path().equals(unit) && !s.outcome().equals("unchanged"));
        if (unit != null && Systemctl.manages(target.unitDir())) {
            if (unitChanged && Systemctl.run("daemon-reload") != 0) {
                notes.add("systemctl daemon-reload failed; run it before starting gatun.service");
            }
            notes.add("start the serve with: systemctl enable --now gatun");
        } else if (unit != null) {
            notes.add("the unit is in " + target.unitDir() + "; systemd reads it from there only if that is one of its unit directories");
        }
        Path running = ServeSockets.of(NetworkNamespace.current());
        boolean replaced = steps.stream().anyMatch(s -> !s.outcome().equals("unchanged"));
        if (replaced && UnixSockets.answers(running)) {
            // A serve keeps the code it started with: the new client would find it without the calls socket.
            notes.add("a gatun serve answers on " + running + "; restart it (systemctl restart gatun, or stop it and "
                    + "start gatun serve again) so that it runs what was installed");
        }
        Output o = out();
        if (o.json()) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("prefix", target.prefix().toString());
            d.put("steps", steps.stream().map(s -> Map.of("path", s.path().toString(), "outcome", s.outcome())).toList());
            d.put("notes", notes);
            o.json(d);
        } else {
            steps.forEach(s -> o.line(s.outcome() + ": " + s.path()));
            notes.forEach(o::line);
        }
        return ExitCode.OK;
    }
}
