package dev.gatun.cli.command;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintWriter;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A command line picocli refused, said as gatun says every failure: one sentence led by the
 * command ("publish: unknown option '--ownr' (did you mean --owner?)"), and on a terminal the
 * command's synopsis and where its help is, not the whole help, which buried the one line that
 * mattered in a script's log.
 */
final class UsageError {

    private UsageError() {}

    /** The sentence for {@code e}, led by the command it was refused in. */
    static String sentence(ParameterException e) {
        return CommandLines.naming(e.getCommandLine(), said(e));
    }

    /** The sentence, the synopsis of the command it was refused in, and how to see that command's help. */
    static void print(ParameterException e, PrintWriter err) {
        CommandLine at = e.getCommandLine();
        err.println("gatun: " + sentence(e));
        err.print(at.getHelp().synopsisHeading() + at.getHelp().synopsis(0));
        err.println("Try '" + at.getCommandSpec().qualifiedName(" ") + " --help' for more.");
        err.flush();
    }

    private static String said(ParameterException e) {
        if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            List<String> unmatched = u.getUnmatched();
            String first = unmatched.getFirst();
            if (u.isUnknownOption()) {
                // picocli lists the unknown option's value too ("Unknown options: '--ownr', 'x'"): only the option is unknown.
                return "unknown option '" + first + "'" + didYouMean(u);
            }
            if (takesCommand(e.getCommandLine())) {
                return "unknown command '" + first + "'" + didYouMean(u);
            }
            return (unmatched.size() == 1 ? "unexpected argument " : "unexpected arguments ") + quoted(unmatched);
        }
        String message = e.getMessage();
        return message.isEmpty() ? message : Character.toLowerCase(message.charAt(0)) + message.substring(1);
    }

    /** A command with subcommands and no parameters of its own: a word where an option is not expected names a subcommand. */
    private static boolean takesCommand(CommandLine at) {
        return !at.getSubcommands().isEmpty() && at.getCommandSpec().positionalParameters().isEmpty();
    }

    private static String didYouMean(UnmatchedArgumentException u) {
        List<String> close = u.getSuggestions();
        if (close.isEmpty()) {
            return "";
        }
        return close.size() == 1 ? " (did you mean " + close.getFirst() + "?)"
                : " (did you mean " + String.join(", ", close.subList(0, close.size() - 1)) + " or " + close.getLast() + "?)";
    }

    private static String quoted(List<String> words) {
        return words.stream().map(w -> "'" + w + "'").collect(Collectors.joining(", "));
    }
}
