package dev.gatun.cli;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.cli.testing.GatunCli;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's training runs for its ahead-of-time caches: a command of one that failed would
 * leave the cache without the classes of the commands after it, and nobody would see it but as
 * a slower start. So every command must succeed, print what it prints for a user, and leave no
 * namespace behind.
 */
@ExtendWith(FreshNamespaces.class)
class TrainingIT {

    @ParameterizedTest(name = "json={0}")
    @ValueSource(booleans = {false, true})
    void everyPerContainerCommandSucceedsAndLeavesNoNamespace(boolean json) {
        List<String> before = NamedNamespaces.list();
        StringWriter printed = new StringWriter();

        int code = Training.commands(json, new PrintWriter(printed, true));

        assertThat(code).as("exit code of the training's commands; they printed:%n%s", printed).isZero();
        if (json) {
            assertThat(printed.toString()).as("what the commands printed")
                    .contains("\"hostPort\" : 8080").doesNotContain("published *:8080");
        } else {
            assertThat(printed.toString()).as("what the commands printed")
                    .contains("published *:8080 -> 10.213.0.2:80/tcp").contains("removed network t1");
        }
        assertThat(NamedNamespaces.list()).as("named namespaces after the training").isEqualTo(before);
    }

    /**
     * The serve's training, as the launcher runs it: a serve of a throwaway namespace in its own
     * JVM, sent publishes over its socket, stopped; it must exit 0 (a request refused would end
     * it early, with a cache of a serve that never published), write the cache, and leave no
     * namespace behind. The cache is then one the JVM takes (AOTMode=on fails if it is not).
     */
    @Test
    void theServesTrainingPublishesThroughItsSocketAndLeavesACache(@TempDir Path dir) throws Exception {
        List<String> before = NamedNamespaces.list();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path jar = GatunCli.ROOT.resolve("cli/target/gatun-cli.jar");
        Path cache = dir.resolve("serve.aot");

        Process training = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED",
                "-XX:AOTCacheOutput=" + cache, "-cp", jar.toString(), "dev.gatun.cli.Training", "serve")
                .redirectErrorStream(true).start();
        String printed = new String(training.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(training.waitFor(5, TimeUnit.MINUTES)).isTrue();

        assertThat(training.exitValue()).as("the training's exit code; it printed:%n%s", printed).isZero();
        assertThat(cache).as("the cache it wrote").exists();
        assertThat(NamedNamespaces.list()).as("named namespaces after the training").isEqualTo(before);
        Process taken = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-XX:AOTCache=" + cache,
                "-XX:AOTMode=on", "-cp", jar.toString(), "dev.gatun.cli.Main", "--version").redirectErrorStream(true).start();
        String version = new String(taken.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(taken.waitFor(1, TimeUnit.MINUTES)).isTrue();
        assertThat(taken.exitValue()).as("a JVM that must take the cache; it printed:%n%s", version).isZero();
    }
}
