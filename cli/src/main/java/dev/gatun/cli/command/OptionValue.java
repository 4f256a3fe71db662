package dev.gatun.cli.command;

import picocli.CommandLine.IParameterConsumer;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.OverwrittenOptionException;

import java.util.ArrayList;
import java.util.List;
import java.util.Stack;

/**
 * Takes the one value of a String option (or of one occurrence of a List&lt;String&gt; option)
 * as picocli itself would, refusing what it refuses with its words.
 *
 * <p>Why: before it takes a detached option value, picocli asks whether the value resembles an
 * option, by parsing it as a Long and then as a Double; for a value such as "8080:80" that is two
 * exceptions, each filling in its stack trace. In a serve the parse runs some 60 frames deep
 * under Jetty: parsing a publish command line took 83 us with one port and 453 with 32, and 59
 * with either once its option values came here (bench/runs/2026-12-04-a648882.md). The answer matters only to a parser that refuses unknown
 * options as option values, which gatun's is not; what does matter (a value missing, or another
 * option, a subcommand or "--" in its place; a single option given twice) is checked here, as
 * picocli's interpreter checks it. {@code OptionValueTest} holds every use against picocli's own
 * parse.
 */
public final class OptionValue implements IParameterConsumer {

    @Override
    public void consumeParameters(Stack<String> args, ArgSpec argSpec, CommandSpec commandSpec) {
        OptionSpec option = (OptionSpec) argSpec;
        if (option.auxiliaryTypes().length != 1 || option.auxiliaryTypes()[0] != String.class
                || option.arity().min() != 1 || option.arity().max() != 1) {
            throw new IllegalStateException("OptionValue takes single String values; option " + option.longestName()
                    + " has type " + option.type().getSimpleName() + " and arity " + option.arity());
        }
        if (args.isEmpty()) {
            throw new MissingParameterException(commandSpec.commandLine(), argSpec,
                    "Missing required parameter for option '" + option.longestName() + "' (" + option.paramLabel() + ")");
        }
        String value = args.peek();
        if (!canBeTaken(value, commandSpec)) {
            throw new MissingParameterException(commandSpec.commandLine(), argSpec,
                    "Expected parameter for option '" + option.longestName() + "' but found '" + value + "'");
        }
        // picocli sets every option back to its initial value before it parses: still holding
        // it, the option was not given before in this command line.
        Object now = option.getValue();
        boolean first = now == option.initialValue();
        if (option.typeInfo().isCollection()) {
            @SuppressWarnings("unchecked")
            List<String> values = first || now == null ? new ArrayList<>() : (List<String>) now;
            values.add(value);
            option.setValue(values);
        } else if (first || commandSpec.parser().overwrittenOptionsAllowed()) {
            option.setValue(value);
        } else {
            throw new OverwrittenOptionException(commandSpec.commandLine(), argSpec,
                    "option '" + option.longestName() + "' (" + option.paramLabel() + ") should be specified only once");
        }
        args.pop();
    }

    /** Whether picocli would take {@code value} as an option's value: not "--", nor a subcommand or option in its place. */
    private static boolean canBeTaken(String value, CommandSpec spec) {
        if (value.equals(spec.parser().endOfOptionsDelimiter())) {
            return false;
        }
        CommandSpec parent = spec.parent();
        boolean command = spec.subcommands().containsKey(value)
                || parent != null && parent.subcommandsRepeatable() && parent.subcommands().containsKey(value);
        if (command && !spec.parser().allowSubcommandsAsOptionParameters()) {
            return false;
        }
        return spec.parser().allowOptionsAsOptionParameters() || !isOption(value, spec);
    }

    /** An option's name, a negated one, NAME=VALUE of an option, or short options run together. */
    private static boolean isOption(String value, CommandSpec spec) {
        if (spec.optionsMap().containsKey(value) || spec.negatedOptionsMap().containsKey(value)) {
            return true;
        }
        int separator = value.indexOf(spec.parser().separator());
        if (separator > 0 && spec.optionsMap().containsKey(value.substring(0, separator))) {
            return true;
        }
        return value.length() > 2 && value.startsWith("-") && spec.posixOptionsMap().containsKey(value.charAt(1));
    }
}
