package dev.gatun.cli;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.PrintWriter;
import java.io.StringWriter;
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
}
