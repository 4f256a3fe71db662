package dev.gatun.cli;

import dev.gatun.cli.docker.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same contract with a {@code gatun serve} running for each test's namespace: every command
 * for that namespace goes through the C client and the serve's local API, and must print and
 * exit exactly as {@link CliIT} expects of the JVM path. The serve logs each command it ran, so
 * a client that silently fell back to the JVM would fail here.
 */
class CliServedIT extends CliIT {

    private final List<GatunServe> serves = new ArrayList<>();

    @Override
    void useHost(NetworkNamespace host) {
        serves.add(GatunServe.start(host.name(), null, "--log-requests"));
    }

    @AfterEach
    void commandsWereServed() {
        try {
            for (GatunServe serve : serves) {
                assertThat(serve.stderr()).as("the serve's log: it ran the test's commands").contains("ran gatun ");
            }
        } finally {
            serves.forEach(GatunServe::close);
            serves.clear();
        }
    }

    // Commands that run where they are typed, or without a namespace of the test's: once, in CliIT, is enough.

    @Override
    void netnsCommandsManageNamedNamespaces() {
    }

    @Override
    void aStartWithUpToDateSourcesDoesNotBuild() {
    }

    @Override
    void demoPassesAndLeavesNothingBehind() {
    }

    @Override
    void everyCommandHasHelpWithExamples() {
    }
}
