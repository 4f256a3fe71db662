package dev.gatun.cli.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The little of systemctl that install and uninstall need, used only when systemd runs this host and reads the unit's directory. */
public final class Systemctl {

    /** The directories of system units that systemd reads (systemd.unit(5)). */
    private static final Set<Path> SYSTEM_UNIT_DIRS = Set.of(Path.of("/etc/systemd/system"), Path.of("/run/systemd/system"),
            Path.of("/usr/local/lib/systemd/system"), Path.of("/usr/lib/systemd/system"), Path.of("/lib/systemd/system"));

    private Systemctl() {
    }

    /** Whether systemd manages this host (sd_booted(3): /run/systemd/system exists) and reads units from {@code unitDir}. */
    public static boolean manages(Path unitDir) {
        return unitDir != null && Files.isDirectory(Path.of("/run/systemd/system"))
                && SYSTEM_UNIT_DIRS.contains(unitDir.toAbsolutePath().normalize());
    }

    /** Runs systemctl with {@code args}; the exit code, or -1 when it could not run. */
    public static int run(String... args) {
        List<String> command = new ArrayList<>(List.of("systemctl"));
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
