package dev.gatun.cli.cni;

import dev.gatun.cli.testing.GatunCli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code gatun cni install}: the link a runtime finds, made once, and never over a file that is not gatun's. */
class CniInstallIT {

    @TempDir
    Path dir;

    @Test
    void makesTheLinkToTheLauncherOnceAndAgain() throws Exception {
        Path bin = dir.resolve("cni/bin");
        GatunCli.Run first = GatunCli.ok("cni", "install", "--bin-dir", bin.toString());
        assertThat(first.out()).startsWith("installed: " + bin.resolve("gatun"));
        Path target = Files.readSymbolicLink(bin.resolve("gatun"));
        assertThat(target).isAbsolute();
        assertThat(target.resolveSibling("cli/src/main/c/gatun-client.c")).as("the launcher of this checkout").exists();
        assertThat(GatunCli.ok("cni", "install", "--bin-dir", bin.toString()).out()).startsWith("already installed");
        assertThat(GatunCli.ok("--json", "cni", "install", "--bin-dir", bin.toString()).json().path("outcome").asText())
                .isEqualTo("already installed");
    }

    @Test
    void replacesAnEarlierInstallFromElsewhere() throws Exception {
        Files.createSymbolicLink(dir.resolve("gatun"), Path.of("/old/checkout/gatun"));
        assertThat(GatunCli.ok("cni", "install", "--bin-dir", dir.toString()).out()).startsWith("replaced the link to /old/checkout/gatun");
    }

    @Test
    void refusesAFileOrLinkThatIsNotGatuns() throws Exception {
        Files.writeString(dir.resolve("gatun"), "#!/bin/sh\n");
        GatunCli.Run file = GatunCli.run("cni", "install", "--bin-dir", dir.toString());
        assertThat(file.code()).isEqualTo(3);
        assertThat(file.err()).contains(dir.resolve("gatun") + " exists and is not gatun's link (a file)");
        assertThat(Files.readString(dir.resolve("gatun"))).isEqualTo("#!/bin/sh\n");

        Path other = dir.resolve("other");
        Files.createDirectories(other);
        Files.createSymbolicLink(other.resolve("gatun"), Path.of("/bin/true"));
        GatunCli.Run link = GatunCli.run("cni", "install", "--bin-dir", other.toString());
        assertThat(link.code()).isEqualTo(3);
        assertThat(link.err()).contains("is not gatun's (a link to /bin/true)");

        GatunCli.Run notADirectory = GatunCli.run("cni", "install", "--bin-dir", dir.resolve("gatun").toString());
        assertThat(notADirectory.code()).isEqualTo(2);
        assertThat(notADirectory.err()).contains("is not a directory");
    }
}
