package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.wire.CommandNames;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The subcommands are made only when used; help still lists them all. */
class SubcommandsTest {

    /** The names the client and a serve find in a command line are exactly the command line's, in help's order. */
    @Test
    void theNamesEveryoneFindsAreTheCommandLinesOwn() {
        assertThat(GatunCommand.SUBCOMMANDS.keySet()).containsExactlyElementsOf(CommandNames.ALL);
    }

    @Test
    void everyNameIsTheOneItsClassDeclares() {
        GatunCommand.SUBCOMMANDS.forEach((name, make) ->
                assertThat(make.get().getClass().getAnnotation(Command.class).name()).as(name).isEqualTo(name));
    }

    /** One command line a row; "-" for none found. */
    @ParameterizedTest(name = "[{0}]")
    @CsvSource(delimiter = '|', value = {
            "--netns publish publish n1       | publish",
            "--netns=ls net ls                | net",
            "--json --driver iptables ls      | ls",
            "--help                           | -",
            "pubish n1                        | -",
            "''                               | -"})
    void theSubcommandIsFoundAfterTheGlobalOptions(String line, String expected) {
        String[] args = line.isEmpty() ? new String[0] : line.split(" ");
        assertThat(CommandNames.subcommandOf(args)).isEqualTo(expected.equals("-") ? null : expected);
    }

    @Test
    void aNamedSubcommandIsTheOnlyOneMade() {
        assertThat(GatunCommand.commandLine(new String[] {"--json", "ls"}).getSubcommands()).containsOnlyKeys("ls");
        assertThat(GatunCommand.commandLine(new String[] {"--version"}).getSubcommands())
                .containsOnlyKeys(GatunCommand.SUBCOMMANDS.keySet());
    }

    /** A usage error at the top points to the top's help, and that help lists every subcommand, not only the one the line named. */
    @Test
    void aUsageErrorAtTheTopPointsToAHelpListingEverySubcommand() {
        StringWriter err = new StringWriter();
        int code = CommandLines.run(new String[] {"--driver", "bogus", "ls"}, new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true));
        assertThat(code).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString()).contains("unknown driver 'bogus'").endsWith("Try 'gatun --help' for more.\n");
        StringWriter help = new StringWriter();
        assertThat(CommandLines.run(new String[] {"--help"}, new PrintWriter(help, true), new PrintWriter(new StringWriter(), true)))
                .isZero();
        for (String name : GatunCommand.SUBCOMMANDS.keySet()) {
            assertThat(help.toString()).containsPattern("(?m)^  " + name + " ");
        }
    }

    @Test
    void aMisspeltSubcommandIsAUsageError() {
        StringWriter err = new StringWriter();
        int code = CommandLines.run(new String[] {"pubish"}, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
        assertThat(code).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString()).contains("pubish").contains("publish");
    }

    /** picocli wraps a footer line longer than its 80 columns again, mid-sentence: every one is written to fit. */
    @Test
    void everyHelpTextFitsItsColumnsWithoutBeingWrappedAgain() {
        CommandLine top = GatunCommand.commandLine(new String[] {"--version"});
        assertThat(top.getUsageMessage()).contains("2 invalid usage or input (nothing was changed); 3 conflict");
        List<String> tooLong = new ArrayList<>();
        for (CommandLine c : withSubcommands(top)) {
            for (String line : c.getCommandSpec().usageMessage().footer()) {
                if (line.length() >= 80) {
                    tooLong.add(c.getCommandSpec().qualifiedName() + ": " + line);
                }
            }
        }
        assertThat(tooLong).isEmpty();
    }

    /**
     * An option whose description is written as several lines shows each as one line of its help:
     * picocli wraps every line to its description column on its own, so a line too long for it
     * left a word alone on the next ("UDP flows of\n the\n moved ports").
     */
    @Test
    void everyOptionDescriptionLineFitsItsColumn() {
        CommandLine top = GatunCommand.commandLine(new String[] {"--version"});
        List<String> split = new ArrayList<>();
        for (CommandLine c : withSubcommands(top)) {
            List<String> shown = c.getUsageMessage().lines().map(String::strip).toList();
            for (CommandLine.Model.OptionSpec o : c.getCommandSpec().options()) {
                String[] lines = o.description();
                for (int i = 0; lines.length > 1 && i < lines.length; i++) {
                    String line = lines[i].strip();
                    if (!line.isEmpty() && shown.stream().noneMatch(l -> l.endsWith(line))) {
                        split.add(c.getCommandSpec().qualifiedName() + " " + o.longestName() + ": " + line);
                    }
                }
            }
        }
        assertThat(split).isEmpty();
    }

    /** Every option and parameter says what it is in its command's help: a bare NET or CONTAINER_IP left the reader to guess. */
    @Test
    void everyOptionAndParameterIsDescribed() {
        CommandLine top = GatunCommand.commandLine(new String[] {"--version"});
        List<String> bare = new ArrayList<>();
        for (CommandLine c : withSubcommands(top)) {
            List<CommandLine.Model.ArgSpec> args = new ArrayList<>(c.getCommandSpec().options());
            args.addAll(c.getCommandSpec().positionalParameters());
            for (CommandLine.Model.ArgSpec a : args) {
                if (!a.hidden() && String.join("", a.description()).isBlank()) {
                    bare.add(c.getCommandSpec().qualifiedName() + " " + a.paramLabel());
                }
            }
        }
        assertThat(bare).isEmpty();
    }

    /** A lone '%' in a description (picocli formats them) prints a warning to stderr at every --help. */
    @Test
    void everyHelpTextFormatsWithoutAWarning() {
        CommandLine top = GatunCommand.commandLine(new String[] {"--version"});
        PrintStream stderr = System.err;
        ByteArrayOutputStream warnings = new ByteArrayOutputStream();
        System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
        try {
            for (CommandLine c : withSubcommands(top)) {
                assertThat(c.getUsageMessage()).isNotEmpty();
            }
        } finally {
            System.setErr(stderr);
        }
        assertThat(warnings.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    private static List<CommandLine> withSubcommands(CommandLine c) {
        List<CommandLine> all = new ArrayList<>(List.of(c));
        c.getSubcommands().values().forEach(s -> all.addAll(withSubcommands(s)));
        return all;
    }
}
