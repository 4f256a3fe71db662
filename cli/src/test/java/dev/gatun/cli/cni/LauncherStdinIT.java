package dev.gatun.cli.cni;

import dev.gatun.cli.testing.GatunCli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A CNI call's config is on the launcher's stdin, for the JVM that runs the call: whatever the
 * launcher runs first (a build when the sources are newer than the jar) must not read it. A
 * checkout's launcher, the CNI link's target, rebuilds at the first call after a change; Maven
 * reading stdin once made that call fail with "the config on stdin is empty".
 */
class LauncherStdinIT {

    @Test
    void aCallWhoseLauncherBuildsFirstStillGetsItsConfig(@TempDir Path checkout) throws Exception {
        Path jar = checkout.resolve("cli/target/gatun-cli.jar");
        Files.createDirectories(jar.getParent());
        Files.copy(GatunCli.ROOT.resolve("cli/target/gatun-cli.jar"), jar);
        Files.createDirectories(checkout.resolve("ci"));
        Files.copy(GatunCli.ROOT.resolve("gatun"), checkout.resolve("gatun"));
        Files.copy(GatunCli.ROOT.resolve("ci/java-home.sh"), checkout.resolve("ci/java-home.sh"));
        Files.writeString(checkout.resolve("pom.xml"), "");
        Files.writeString(checkout.resolve("cli/pom.xml"), "");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(3600)));
        Path source = checkout.resolve("cli/src/main/Changed.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, "// newer than the jar: the launcher builds first\n");

        // A build that reads whatever its stdin holds, as Maven did, and then makes the jar current.
        Path bin = Files.createDirectories(checkout.resolve("bin"));
        Path saw = checkout.resolve("build-read");
        Path mvn = bin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\ncat > '" + saw + "'\ntouch '" + jar + "'\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));

        // Cut short on purpose: the JVM's answer says whether it read this config or nothing.
        String config = "{\"cniVersion\": \"1.0.0\", \"name\": \"stdin-check\", \"type\": \"gatun\"";
        ProcessBuilder pb = new ProcessBuilder("sh", checkout.resolve("gatun").toString()).directory(checkout.toFile());
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("GATUN_NO_CLIENT", "1");
        pb.environment().put("CNI_COMMAND", "ADD");
        pb.environment().put("CNI_CONTAINERID", "stdin-check");
        pb.environment().put("CNI_NETNS", "/proc/self/ns/net");
        pb.environment().put("CNI_IFNAME", "eth0");
        pb.environment().put("CNI_PATH", bin.toString());
        Path stderr = checkout.resolve("stderr");
        Process p = pb.redirectError(stderr.toFile()).start();
        try (var in = p.getOutputStream()) {
            in.write(config.getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the launcher finished").isTrue();
        String err = Files.readString(stderr);

        assertThat(err).as("the launcher built first").contains("building");
        assertThat(Files.exists(saw)).as("the build ran").isTrue();
        assertThat(Files.readString(saw)).as("what the build read of the call's stdin").isEmpty();
        assertThat(out).as("the call's answer: the JVM read this config")
                .contains("\"code\" : 6").contains("not valid JSON").doesNotContain("empty");
        assertThat(p.exitValue()).isEqualTo(1);
    }
}
