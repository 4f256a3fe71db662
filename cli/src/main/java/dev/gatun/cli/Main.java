package dev.gatun.cli;

import picocli.CommandLine;

import java.io.PrintWriter;

/** Runs the gatun command and turns every failure into one sentence and the documented exit code. */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = GatunCommand.commandLine(args);
        cli.setOut(out);
        cli.setErr(err);
        boolean json = java.util.Arrays.asList(args).contains("--json");
        cli.setExecutionExceptionHandler((e, line, parsed) -> fail(json, out, err, ExitCode.of(e), message(e)));
        cli.setParameterExceptionHandler((e, a) -> {
            if (json) {
                return fail(true, out, err, ExitCode.USAGE, e.getMessage());
            }
            err.println("gatun: " + e.getMessage());
            // The top level's help lists every subcommand, not only the one this line was made with.
            CommandLine shown = e.getCommandLine() == cli ? GatunCommand.commandLine(new String[0]) : e.getCommandLine();
            shown.usage(err);
            return ExitCode.USAGE;
        });
        return cli.execute(args);
    }

    private static int fail(boolean json, PrintWriter out, PrintWriter err, int code, String message) {
        if (json) {
            new Output(out, true).json(Json.error(code, message));
        } else {
            err.println("gatun: " + message);
            err.flush();
        }
        return code;
    }

    private static String message(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }
}
