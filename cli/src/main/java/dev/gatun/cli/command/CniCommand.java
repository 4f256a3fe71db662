package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.EnvironmentException;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.host.PluginFiles;
import dev.gatun.cli.host.RuntimeLayout;
import dev.gatun.driver.ConflictException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** gatun as a CNI plugin: the link that makes a container runtime find it. */
@Command(name = "cni", mixinStandardHelpOptions = true,
        description = "gatun as a CNI plugin of type \"gatun\" (Podman, containerd, nerdctl, CRI-O).",
        subcommands = CniCommand.Install.class,
        footer = {"", "Examples:", "  gatun cni install", "  gatun cni install --bin-dir /usr/lib/cni"})
final class CniCommand {

    @Command(name = "install", mixinStandardHelpOptions = true,
            description = {"Make the link named gatun, to this gatun (the launcher of a checkout, the installed gatun command), in a "
                    + "CNI bin directory: the plugin.",
                    "A runtime executes it with CNI_COMMAND set; it forwards to the gatun serve of its namespace "
                            + "when one runs, and runs in a JVM of its own otherwise."},
            footer = {"", "Examples:", "  gatun cni install", "  gatun cni install --bin-dir /usr/lib/cni",
                    "", "Exit codes: 3 when DIR/gatun exists and is not gatun's link (it is left alone)."})
    static final class Install extends Base {

        @Option(names = "--bin-dir", paramLabel = "DIR", description = "The CNI bin directory (default: /opt/cni/bin).")
        Path binDir = Path.of("/opt/cni/bin");

        @Override
        public Integer call() {
            Path launcher = RuntimeLayout.ofThisProcess("cni install").entry();
            Path link = binDir.resolve("gatun").toAbsolutePath();
            String outcome;
            try {
                if (Files.exists(binDir) && !Files.isDirectory(binDir)) {
                    throw new InvalidInputException("--bin-dir " + binDir + " is not a directory");
                }
                Files.createDirectories(binDir);
                if (Files.isSymbolicLink(link)) {
                    Path target = Files.readSymbolicLink(link);
                    if (target.equals(launcher)) {
                        outcome = "already installed";
                    } else if (PluginFiles.isGatunsCniLink(link)) {
                        Files.delete(link); // an earlier install, of gatun at another place
                        Files.createSymbolicLink(link, launcher);
                        outcome = "replaced the link to " + target;
                    } else {
                        throw new ConflictException(link + " exists and is not gatun's (a link to " + target
                                + "); remove it first if gatun should replace it");
                    }
                } else if (Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
                    throw new ConflictException(link + " exists and is not gatun's link (a "
                            + (Files.isDirectory(link) ? "directory" : "file") + "); remove it first if gatun should replace it");
                } else {
                    Files.createSymbolicLink(link, launcher);
                    outcome = "installed";
                }
            } catch (IOException e) {
                throw new EnvironmentException("cannot make " + link + ": " + e);
            }
            Output o = out();
            if (o.json()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("link", link.toString());
                d.put("target", launcher.toString());
                d.put("outcome", outcome);
                o.json(d);
            } else {
                o.line(outcome + ": " + link + " -> " + launcher
                        + " (CNI plugin type \"gatun\"; runtimes look in " + binDir + ")");
            }
            return ExitCode.OK;
        }
    }
}
