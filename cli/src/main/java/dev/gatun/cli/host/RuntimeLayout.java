package dev.gatun.cli.host;

import dev.gatun.EnvironmentException;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where gatun's runtime files are: a checkout (the launcher ./gatun, the build's jar and C client
 * under cli/target) or a prefix that {@code gatun install} filled (PREFIX/lib/gatun with its list of
 * files, and the C client as PREFIX/bin/gatun). The launcher tells which by the same list.
 */
public record RuntimeLayout(Path home, boolean installed) {

    /** The list of what install wrote, in PREFIX/lib/gatun; also what marks an installed runtime. */
    public static final String LIST = "installed";

    /** The runtime of this process, from GATUN_HOME, which the launcher sets. */
    public static RuntimeLayout ofThisProcess(String operation) {
        String home = System.getenv("GATUN_HOME");
        if (home == null || home.isEmpty() || !Files.isExecutable(Path.of(home, "gatun"))) {
            throw new EnvironmentException(operation + ": cannot tell where the gatun launcher is (GATUN_HOME "
                    + (home == null ? "is unset" : "is " + home) + "); run it through the launcher: ./gatun "
                    + operation);
        }
        return of(Path.of(home));
    }

    public static RuntimeLayout of(Path home) {
        Path h = home.toAbsolutePath().normalize();
        return new RuntimeLayout(h, Files.isRegularFile(h.resolve(LIST)));
    }

    public Path launcher() {
        return home.resolve("gatun");
    }

    public Path jar() {
        return installed ? home.resolve("gatun-cli.jar") : home.resolve("cli/target/gatun-cli.jar");
    }

    /** The C client that forwards one-shot commands to a serve. */
    public Path client() {
        return installed ? home.resolve("../../bin/gatun").normalize() : home.resolve("cli/target/gatun-client");
    }

    /** The launcher's shell library that finds Java 25. */
    public Path javaHomeScript() {
        return installed ? home.resolve("java-home.sh") : home.resolve("ci/java-home.sh");
    }

    /**
     * What a CNI link or a netavark plugin file runs: the installed C client (no shell per call;
     * it runs the launcher itself when no serve answers), else the checkout's launcher.
     */
    public Path entry() {
        return installed ? client() : launcher();
    }
}
