package dev.gatun.cli;

import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same contract with a {@code gatun serve} running for each test's namespace: every command
 * for that namespace goes through the C client and the serve's local API, and must print and
 * exit exactly as {@link CliIT} expects of the JVM path. Each such command must have its own
 * {@code ran gatun ARGS: exit CODE} line in the serve's log ({@code --log-requests}), so a client
 * that silently fell back to the JVM for even one of them fails the test.
 */
class CliServedIT extends CliIT {

    /** The commands the C client sends to a serve (gatun-client.c's SERVED). */
    private static final List<String> SERVED = List.of("net", "attach", "detach", "publish", "unpublish", "ls", "ruleset",
            "doctor");
    /** The serve's log is read from a pipe: how long its last lines may take to arrive. */
    private static final Duration LOG_ARRIVAL = Duration.ofSeconds(10);

    private final Map<String, GatunServe> serves = new LinkedHashMap<>();
    private final List<GatunCli.Run> runs = Collections.synchronizedList(new ArrayList<>());
    private AutoCloseable watching;

    @Override
    void useHost(NetworkNamespace host) {
        serves.put(host.name(), GatunServe.start(host.name(), null, "--log-requests"));
    }

    @Override
    boolean heals() {
        return true;
    }

    /** The serve runs doctor itself, and says so. */
    @Override
    String serveCheckSays(NetworkNamespace host) {
        return "this doctor ran in the gatun serve answering on /run/gatun/netns-" + host.inode() + ".sock";
    }

    @BeforeEach
    void watchCommands() {
        watching = GatunCli.watch(runs::add);
    }

    @AfterEach
    void everyCommandForAServedNamespaceWasServed() throws Exception {
        try {
            watching.close();
            List<String> expected = new ArrayList<>();
            synchronized (runs) {
                for (GatunCli.Run r : runs) {
                    if (meantToBeServed(r.args())) {
                        expected.add("ran gatun " + String.join(" ", r.args()) + ": exit " + r.code());
                    }
                }
            }
            assertThat(serves).as("a test here runs a serve").isNotEmpty();
            assertThat(expected).as("commands the test sent to its serve").isNotEmpty();
            long deadline = System.nanoTime() + LOG_ARRIVAL.toNanos();
            List<String> missing;
            do {
                missing = missingFrom(ranLines(), expected);
            } while (!missing.isEmpty() && System.nanoTime() < deadline && pause());
            assertThat(missing).as("commands with no line of their own in the serve's log (they ran in a JVM); the log:\n%s",
                    String.join("\n", ranLines())).isEmpty();
        } finally {
            serves.values().forEach(GatunServe::close);
            serves.clear();
            runs.clear();
        }
    }

    /** {@code --netns NS COMMAND ...} for a namespace with a serve, a command the client forwards, no other driver. */
    private boolean meantToBeServed(List<String> args) {
        return args.size() >= 3 && args.get(0).equals("--netns") && serves.containsKey(args.get(1))
                && !args.contains("--driver") && firstWord(args).map(SERVED::contains).orElse(false);
    }

    private static Optional<String> firstWord(List<String> args) {
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--netns") || a.equals("--driver")) {
                i++;
            } else if (!a.startsWith("-")) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    /** Every {@code ran gatun ...} line of every serve of the test. */
    private List<String> ranLines() {
        List<String> lines = new ArrayList<>();
        for (GatunServe serve : serves.values()) {
            serve.stderr().lines().filter(l -> l.contains("ran gatun ")).map(l -> l.substring(l.indexOf("ran gatun ")))
                    .forEach(lines::add);
        }
        return lines;
    }

    /** The expected lines that {@code log} lacks, each log line answering for one command only. */
    private static List<String> missingFrom(List<String> log, List<String> expected) {
        List<String> left = new ArrayList<>(log);
        List<String> missing = new ArrayList<>();
        for (String e : expected) {
            if (!left.remove(e)) {
                missing.add(e);
            }
        }
        return missing;
    }

    private static boolean pause() throws InterruptedException {
        Thread.sleep(20);
        return true;
    }

    // Commands that run where they are typed, or without a namespace of the test's: once, in CliIT, is enough.
    // An override without @Test would hide the inherited test without a trace; these show as skipped.

    @Test
    @Disabled("netns commands run where they are typed, never in a serve: CliIT runs it")
    @Override
    void netnsCommandsManageNamedNamespaces() {
    }

    @Test
    @Disabled("--version runs where it is typed, never in a serve: CliIT runs it")
    @Override
    void aStartWithUpToDateSourcesDoesNotBuild() {
    }

    @Test
    @Disabled("demo runs where it is typed on namespaces of its own, never in a serve: CliIT runs it")
    @Override
    void demoPassesAndLeavesNothingBehind() {
    }

    @Test
    @Disabled("help runs where it is typed, never in a serve: CliIT runs it")
    @Override
    void everyCommandHasHelpWithExamples() {
    }
}
