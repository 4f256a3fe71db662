package dev.gatun.cli.command;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Combinators;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link OptionValue} parses as picocli does: every command line, valid or not, gives the same
 * values or the same refusal (class, message, command) with gatun's model as with the same model
 * whose options have picocli's own parsing back. The lines are made of the tokens that make
 * picocli decide differently: option names, NAME=VALUE, "--", a subcommand's name, values that
 * look like options or numbers, nothing where a value should be. Each model is also parsed twice,
 * as a serve parses with a kept model.
 */
class OptionValueTest {

    private static final List<String> TOKENS = List.of("-p", "--owner", "--netns", "8080:80", "127.0.0.1:53:53/udp",
            "web-1", "-p=81:81", "--owner=o2", "-p82:82", "--", "-5", "-1.5", "--json", "--replace", "--drain",
            "--nope", "-x", "publish", "net", "n1", "10.88.0.2", "", "--owner=", "--timeout", "3", "-pp");

    @Provide
    Arbitrary<List<String>> commandLines() {
        Arbitrary<List<String>> rest = Arbitraries.of(TOKENS).list().ofMaxSize(9);
        Arbitrary<List<String>> global = Arbitraries.of(List.<String>of(), List.of("--netns", "h1"), List.of("--netns"),
                List.of("--netns=h2"), List.of("--netns", "--json"), List.of("--netns", "h1", "--netns", "h2"));
        return Combinators.combine(global, Arbitraries.of("publish", "unpublish"), rest)
                .as((g, command, r) -> {
                    List<String> line = new ArrayList<>(g);
                    line.add(command);
                    line.addAll(r);
                    return line;
                });
    }

    @Property(tries = 3000)
    void parsesAsPicocliItself(@ForAll("commandLines") List<String> line) {
        String[] args = line.toArray(String[]::new);
        CommandLine ours = GatunCommand.commandLine(args);
        CommandLine picocli = withoutOptionValue(GatunCommand.commandLine(args));
        for (int round = 0; round < 2; round++) {
            assertThat(outcome(ours, args)).as("round %d of %s", round, line).isEqualTo(outcome(picocli, args));
        }
    }

    @Example
    void theOptionsItTakesAreThoseGatunMarks() {
        // The test above must compare something: the consumer is on the options a served publish parses.
        CommandLine cli = GatunCommand.commandLine(new String[] {"publish"});
        assertThat(consumed(cli)).containsExactlyInAnyOrder("gatun --netns", "publish -p", "publish --owner");
        assertThat(consumed(withoutOptionValue(cli))).isEmpty();
        CommandLine unpublish = GatunCommand.commandLine(new String[] {"unpublish"});
        assertThat(consumed(unpublish)).contains("unpublish -p", "unpublish --owner");
    }

    @Example
    void valuesAndRefusalsReadAsPicocliWordsThem() {
        assertThat(outcome(GatunCommand.commandLine(new String[] {"publish"}),
                new String[] {"publish", "n1", "10.88.0.2", "-p", "8080:80", "-p=81:81", "-p82:82", "--owner", "w"}))
                .containsEntry("publish -p", "[8080:80, 81:81, 82:82]").containsEntry("publish --owner", "w");
        assertThat(outcome(GatunCommand.commandLine(new String[] {"publish"}), new String[] {"publish", "n1", "x", "-p"}))
                .containsEntry("refused", "MissingParameterException: Missing required parameter for option '-p' (SPEC)");
        assertThat(outcome(GatunCommand.commandLine(new String[] {"publish"}),
                new String[] {"publish", "n1", "x", "-p", "--owner", "o"}))
                .containsEntry("refused", "MissingParameterException: Expected parameter for option '-p' but found '--owner'");
        assertThat(outcome(GatunCommand.commandLine(new String[] {"publish"}),
                new String[] {"publish", "n1", "x", "-p", "1", "--owner", "a", "--owner", "b"}))
                .containsEntry("refused", "OverwrittenOptionException: option '--owner' (ID) should be specified only once");
    }

    @Command(name = "misused")
    static final class Misused {
        @Option(names = "--count", parameterConsumer = OptionValue.class)
        int count;
    }

    @Example
    void anOptionThatIsNotOneStringIsRefusedNamingIt() {
        // Its values would need picocli's conversion, which the consumer does not make.
        assertThatThrownBy(() -> new CommandLine(new Misused()).parseArgs("--count", "3"))
                .hasMessageContaining("option --count has type int");
    }

    /** What parsing {@code args} with {@code cli} left: each option's and parameter's value, or the refusal. */
    private static Map<String, String> outcome(CommandLine cli, String[] args) {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            cli.parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            out.put("refused", e.getClass().getSimpleName() + ": " + e.getMessage());
            out.put("refused by", e.getCommandLine().getCommandSpec().qualifiedName());
            return out;
        }
        for (CommandSpec spec : specs(cli)) {
            for (ArgSpec a : spec.args()) {
                String name = a instanceof OptionSpec o ? o.longestName() : a.paramLabel();
                out.put(spec.qualifiedName().replace("gatun ", "") + " " + name, String.valueOf((Object) a.getValue()));
            }
        }
        return out;
    }

    /** The same model with picocli's own parsing of every option {@link OptionValue} takes. */
    private static CommandLine withoutOptionValue(CommandLine cli) {
        for (CommandSpec spec : specs(cli)) {
            for (OptionSpec o : List.copyOf(spec.options())) {
                if (o.parameterConsumer() instanceof OptionValue) {
                    spec.remove(o);
                    spec.addOption(o.toBuilder().parameterConsumer(null).build());
                }
            }
        }
        return cli;
    }

    private static List<String> consumed(CommandLine cli) {
        List<String> out = new ArrayList<>();
        for (CommandSpec spec : specs(cli)) {
            for (OptionSpec o : spec.options()) {
                if (o.parameterConsumer() instanceof OptionValue) {
                    out.add(spec.qualifiedName().replace("gatun ", "") + " " + o.longestName());
                }
            }
        }
        return out;
    }

    private static List<CommandSpec> specs(CommandLine cli) {
        List<CommandSpec> out = new ArrayList<>(List.of(cli.getCommandSpec()));
        cli.getSubcommands().values().forEach(sub -> out.addAll(specs(sub)));
        return out;
    }
}
