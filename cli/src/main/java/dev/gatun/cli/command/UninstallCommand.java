package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.driver.ConflictException;
import dev.gatun.cli.host.InstallList;
import dev.gatun.cli.host.Installation;
import dev.gatun.cli.host.ServiceUnit;
import dev.gatun.cli.host.Systemctl;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Removes exactly what gatun install wrote under a prefix. */
@Command(name = "uninstall", mixinStandardHelpOptions = true,
        description = {"Remove what gatun install wrote (the list in PREFIX/lib/gatun/installed: the runtime, the gatun "
                + "command, gatun.service, the CNI link and netavark plugin file if installed) and the directories it "
                + "made, when empty. A file changed since gatun wrote it is not gatun's any more: then nothing is "
                + "removed. The kernel's state (networks, published ports) is left as it is.",
                "Refuses while systemd runs gatun.service: systemctl disable --now gatun first."},
        footer = {"", "Examples:", "  gatun uninstall", "  gatun uninstall --prefix /opt/gatun",
                "", "Exit codes: 3 when an installed file was changed, or the service runs (nothing",
                "is removed). Nothing installed there is not an error (exit 0)."})
final class UninstallCommand extends Base {

    @Option(names = "--prefix", paramLabel = "DIR", description = "Where gatun was installed (default: /usr/local).")
    Path prefix = Path.of("/usr/local");

    @Override
    public Integer call() {
        Installation.Target target = new Installation.Target(prefix, null, null, null);
        for (InstallList.Entry e : InstallList.read(target.list()).entries()) {
            Path p = e.path();
            if (p.getFileName().toString().equals(ServiceUnit.NAME) && Systemctl.manages(p.getParent())
                    && Systemctl.run("is-active", "--quiet", ServiceUnit.NAME) == 0) {
                throw new ConflictException("uninstall: " + ServiceUnit.NAME + " is running; stop it first: "
                        + "systemctl disable --now gatun");
            }
        }
        List<Installation.Step> steps = Installation.uninstall(target.prefix());
        boolean unitRemoved = steps.stream().anyMatch(s -> s.path().getFileName().toString().equals(ServiceUnit.NAME)
                && Systemctl.manages(s.path().getParent()));
        if (unitRemoved) {
            Systemctl.run("daemon-reload");
        }
        Output o = out();
        if (o.json()) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("prefix", target.prefix().toString());
            d.put("steps", steps.stream().map(s -> Map.of("path", s.path().toString(), "outcome", s.outcome())).toList());
            o.json(d);
        } else if (steps.isEmpty()) {
            o.line("nothing installed under " + target.prefix() + " (no " + target.list() + ")");
        } else {
            steps.forEach(s -> o.line(s.outcome() + ": " + s.path()));
        }
        return ExitCode.OK;
    }
}
