package dev.gatun.bench;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class HarnessCountsTest {

    /** A count that cannot run is a usage error (exit 2) naming the option and the value, before anything is measured or made. */
    @ParameterizedTest
    @CsvSource({"--serves,0", "--serves,-3", "--requests,109", "--requests,0", "--rounds,0", "--mappings,0",
            "--cycles,0", "--clients,-1", "--conntrack-entries,0"})
    void aCountThatCannotRunIsRefusedNamingIt(String option, String value) {
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new Harness());
        cl.setErr(new PrintWriter(err, true));
        int status = cl.execute(option, value);
        assertThat(status).isEqualTo(2);
        assertThat(err.toString()).contains(option + " must be at least").contains("not " + value);
    }
}
