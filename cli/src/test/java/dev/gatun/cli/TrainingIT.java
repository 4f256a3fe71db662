package dev.gatun.cli;

import dev.gatun.netns.NamedNamespaces;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The launcher's training run for the ahead-of-time cache: a command of it that failed would
 * leave the cache without the classes of the commands after it, and nobody would see it but as
 * a slower start. So every command must succeed, and the throwaway namespaces must be gone.
 */
@ExtendWith(FreshNamespaces.class)
class TrainingIT {

    @Test
    void everyPerContainerCommandSucceedsAndLeavesNoNamespace() {
        List<String> before = NamedNamespaces.list();
        StringWriter printed = new StringWriter();

        int code = Training.commands(new PrintWriter(printed, true));

        assertThat(code).as("exit code of the training's commands; they printed:%n%s", printed).isZero();
        assertThat(printed.toString()).as("what the commands printed")
                .contains("published *:8080 -> 10.213.0.2:80/tcp")
                .contains("removed network t1");
        assertThat(NamedNamespaces.list()).as("named namespaces after the training").isEqualTo(before);
    }
}
