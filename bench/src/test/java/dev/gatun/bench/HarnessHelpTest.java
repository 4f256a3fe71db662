package dev.gatun.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class HarnessHelpTest {

    /** A lone '%' in a description (picocli formats them) prints a warning to stderr at every --help. */
    @Test
    void theHelpFormatsWithoutAWarning() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        String usage;
        try {
            usage = new CommandLine(new Harness()).getUsageMessage();
        } finally {
            System.setErr(stderr);
        }
        assertThat(usage).contains("within 10% of its baseline");
        assertThat(warnings.toString(StandardCharsets.UTF_8)).isEmpty();
    }
}
