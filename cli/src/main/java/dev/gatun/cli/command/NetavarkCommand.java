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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;

/** gatun as a netavark plugin (Podman 5): the plugin file that makes netavark find it. */
@Command(name = "netavark", mixinStandardHelpOptions = true,
        description = {"gatun as a netavark plugin: Podman 5 networks of driver gatun (podman network create -d gatun).",
                "netavark runs the plugin as 'gatun create', 'gatun setup NETNS', 'gatun teardown NETNS' and "
                        + "'gatun info' with JSON on stdin; the plugin file runs 'gatun netavark VERB ...', which "
                        + "forwards to the gatun serve of its namespace when one runs and runs in a JVM otherwise."},
        subcommands = NetavarkCommand.Install.class,
        footer = {"", "Examples:", "  gatun netavark install", "  gatun netavark install --plugin-dir /etc/containers/netavark-plugins",
                "  gatun netavark info"})
final class NetavarkCommand {

    @Command(name = "install", mixinStandardHelpOptions = true,
            description = {"Write the plugin, an executable named gatun that runs this gatun (the launcher of a checkout, the "
                    + "installed gatun command), in a directory "
                    + "that containers.conf's [network] netavark_plugin_dirs lists.",
                    "Podman then takes -d gatun: podman network create -d gatun --disable-dns web."},
            footer = {"", "Examples:", "  gatun netavark install",
                    "  gatun netavark install --plugin-dir /etc/containers/netavark-plugins",
                    "", "Exit codes: 3 when DIR/gatun exists and is not gatun's plugin (it is left",
                    "alone)."})
    static final class Install extends Base {

        @Option(names = "--plugin-dir", paramLabel = "DIR",
                description = "Where netavark looks for plugins (default: /usr/local/libexec/netavark, the first of "
                        + "Podman's default netavark_plugin_dirs).")
        Path pluginDir = Path.of("/usr/local/libexec/netavark");

        @Override
        public Integer call() {
            Path launcher = RuntimeLayout.ofThisProcess("netavark install").entry();
            Path plugin = pluginDir.resolve("gatun").toAbsolutePath();
            String text = PluginFiles.netavarkPlugin(launcher);
            String outcome;
            try {
                if (Files.exists(pluginDir) && !Files.isDirectory(pluginDir)) {
                    throw new InvalidInputException("--plugin-dir " + pluginDir + " is not a directory");
                }
                Files.createDirectories(pluginDir);
                if (Files.isSymbolicLink(plugin) || Files.isDirectory(plugin, LinkOption.NOFOLLOW_LINKS)) {
                    throw new ConflictException(plugin + " exists and is not gatun's plugin (a "
                            + (Files.isSymbolicLink(plugin) ? "link" : "directory") + "); remove it first if gatun "
                            + "should replace it");
                }
                if (Files.exists(plugin, LinkOption.NOFOLLOW_LINKS)) {
                    String old = Files.readString(plugin, StandardCharsets.UTF_8);
                    if (!PluginFiles.isGatunsNetavarkPlugin(plugin)) {
                        throw new ConflictException(plugin + " exists and is not gatun's plugin; remove it first if "
                                + "gatun should replace it");
                    }
                    outcome = old.equals(text) ? "already installed" : "replaced the plugin of another gatun";
                } else {
                    outcome = "installed";
                }
                if (!outcome.equals("already installed")) {
                    // Written beside it and moved, so netavark never runs half a file.
                    Path part = pluginDir.resolve(".gatun.part");
                    Files.writeString(part, text, StandardCharsets.UTF_8);
                    Files.setPosixFilePermissions(part, PosixFilePermissions.fromString("rwxr-xr-x"));
                    Files.move(part, plugin, StandardCopyOption.ATOMIC_MOVE,
                            StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                throw new EnvironmentException("cannot write " + plugin + ": " + e);
            }
            Output o = out();
            if (o.json()) {
                Map<String, Object> d = new LinkedHashMap<>();
                d.put("plugin", plugin.toString());
                d.put("launcher", launcher.toString());
                d.put("outcome", outcome);
                o.json(d);
            } else {
                o.line(outcome + ": " + plugin + " (runs " + launcher + "; list " + pluginDir
                        + " in containers.conf's [network] netavark_plugin_dirs, then podman network create -d gatun)");
            }
            return ExitCode.OK;
        }
    }
}
