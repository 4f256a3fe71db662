package dev.gatun.cli.command;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A command line whose values are wrong exits 2 naming the value, before any namespace is
 * opened or any driver made: no root, one row per command line. (CliIT runs some of them
 * through the launcher and a serve.)
 */
class BadInputTest {

    /** Never opened: a row that got past its checks would name this path instead of its value. */
    private static final String NOWHERE = "/nonexistent/gatun-bad-input-test";

    private record Run(int code, String out, String err) {}

    private static Run run(String... words) {
        List<String> args = new ArrayList<>(List.of("--netns", NOWHERE));
        args.addAll(Arrays.asList(words));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = CommandLines.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "publish n1 10.88.0.2 -p 8080::80:x                       | 8080::80:x",
            "publish n1 10.88.0.2 -p 70000:80                         | 70000",
            "publish n1 10.88.0.2 -p 8080:80/icmp                     | icmp",
            "publish n1 10.88.0.2 -p 8010-8000:80                     | 8010-8000",
            "publish n1 10.88.0.300 -p 8080:80                        | 10.88.0.300",
            "publish n1 10.88.0.2                                     | -p",
            "unpublish n1 10.88.0.2 -p 0:80                           | 0:80",
            "net create n1 --subnet 10.88.0.0/33                      | length 33",
            "net create n1 --subnet 10.88.0.0/16 --subnet 10.89.0.0/16 | 10.89.0.0/16",
            "net create n1 --subnet 10.88.0.0/16 --gateway 10.88.0.x  | 10.88.0.x",
            "net create n1 --subnet 10.88.0.0/16 --mac 01:00:5e:00:00:01 | 01:00:5e:00:00:01",
            "net create n1 --subnet 10.88.0.0/16 --mtu big            | big"})
    void aBadValueExitsTwoNamingItBeforeAnythingIsOpened(String line, String named) {
        Run r = run(line.split(" "));
        assertThat(r.code()).as("exit code; stderr: %s", r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith("gatun: ").contains(named).doesNotContain(NOWHERE);
    }

    /** A script's log names the operation as well as the value: the command that failed leads, once. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "publish n1 10.88.0.2 -p 70000:80           | gatun: publish: port spec '70000:80'",
            "net create n1 --subnet 10.88.0.0/33        | gatun: net create: ",
            "unpublish n1 10.88.0.2 --drain --timeout 0 | gatun: unpublish: --timeout 0 ",
            "unpublish n1 10.88.0.2 --timeout 30        | gatun: unpublish: --timeout 30 is a --drain's wait"})
    void aFailureNamesItsCommandOnce(String line, String start) {
        Run r = run(line.split(" "));
        assertThat(r.code()).as("exit code; stderr: %s", r.err()).isEqualTo(2);
        assertThat(r.err()).startsWith(start).doesNotContain("unpublish: unpublish");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "publish n1 10.88.0.2 -p 70000:80   | 70000",
            "publish n1                         | -p",
            "publish n1 10.88.0.2 --bogus -p 80 | publish: unknown option '--bogus'",
            "net crate n1                       | net: unknown command 'crate'"})
    void withJsonTheErrorIsADocumentOnStdout(String line, String named) throws Exception {
        List<String> words = new ArrayList<>(List.of("--json"));
        words.addAll(Arrays.asList(line.split(" ")));
        Run r = run(words.toArray(String[]::new));
        assertThat(r.code()).isEqualTo(2);
        JsonNode error = new ObjectMapper().readTree(r.out()).get("error");
        assertThat(error.get("code").asInt()).isEqualTo(2);
        assertThat(error.get("message").asText()).contains(named).doesNotContain(NOWHERE);
        assertThat(r.err()).as("the document says it all").isEmpty();
    }

    /**
     * A line picocli refuses reads as gatun's other failures: one sentence led by the command,
     * naming the word and, when one is close, what was meant; then the command's synopsis and
     * where its help is, not the help itself (its option table buried the error in a log).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "pubish n1                                 | gatun: unknown command 'pubish' (did you mean publish or unpublish?) | gatun",
            "net crate n1                              | gatun: net: unknown command 'crate' (did you mean create?)           | gatun net",
            "publish n1 10.88.0.2 --ownr x -p 80       | gatun: publish: unknown option '--ownr' (did you mean --owner?)     | gatun publish",
            "publish n1 10.88.0.2 --bogus -p 80        | gatun: publish: unknown option '--bogus'                            | gatun publish",
            "publish n1 10.88.0.2 extra -p 80          | gatun: publish: unexpected argument 'extra'                         | gatun publish",
            "unpublish n1 10.88.0.2 -p                 | gatun: unpublish: missing required parameter for option '-p'        | gatun unpublish"})
    void aRefusedLineNamesItsCommandAndPointsToItsHelp(String line, String first, String command) {
        Run r = run(line.split(" "));
        assertThat(r.code()).as("exit code; stderr: %s", r.err()).isEqualTo(2);
        List<String> lines = r.err().lines().toList();
        assertThat(lines.getFirst()).startsWith(first);
        assertThat(lines.get(1)).startsWith("Usage: " + command + " [");
        assertThat(lines.getLast()).isEqualTo("Try '" + command + " --help' for more.");
        // The synopsis only: no option's description, which the help lists.
        assertThat(r.err()).doesNotContain("Show this help message").doesNotContain(NOWHERE);
        assertThat(r.out()).isEmpty();
    }
}
