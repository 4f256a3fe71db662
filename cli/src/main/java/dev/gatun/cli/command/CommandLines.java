package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Failure;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.wire.CommandNames;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.Writer;
import java.util.Arrays;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Runs one command line and turns every failure into one sentence and the documented exit code:
 * for the JVM that {@link Main} starts, and for a serve that runs a client's line (handed to it as
 * its {@link dev.gatun.cli.api.CommandLineRunner}).
 */
public final class CommandLines {

    private CommandLines() {}

    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, null);
    }

    /**
     * Runs one command line; {@code served} is the serve's context when a serve runs it for a
     * client (null otherwise). A {@link Served.Misdirected} escapes, for the serve to answer.
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Served served) {
        QuickLine.Read plain = served == null ? null : QuickLine.read(args);
        return plain != null ? runRead(plain, out, err, served) : runParsed(args, out, err, served);
    }

    /**
     * Runs a command {@link QuickLine} read, as picocli would have run it: same output, same
     * exit code, a failure in the same sentence. In a serve only: there a cold picocli cost a
     * publish a third of its time, while a one-shot JVM showed no gain out of its own noise
     * (bench/README.md), so it keeps picocli's one path.
     */
    private static int runRead(QuickLine.Read line, PrintWriter out, PrintWriter err, Served served) {
        GatunCommand root = new GatunCommand();
        root.json = line.json();
        root.netns = line.netns();
        root.served = served;
        try {
            return line.command().callUnparsed(root, out, err);
        } catch (Served.Misdirected e) {
            throw e;
        } catch (Exception e) {
            return fail(line.json(), out, err, ExitCode.of(e), naming(line.name(), Failure.sentence(e)));
        }
    }

    /** Runs one command line as picocli parses it. */
    static int runParsed(String[] args, PrintWriter out, PrintWriter err, Served served) {
        CommandLine cli = served == null ? GatunCommand.commandLine(args) : borrowed(args);
        ((GatunCommand) cli.getCommand()).served = served;
        cli.setOut(out);
        cli.setErr(err);
        boolean json = Arrays.asList(args).contains("--json");
        Served.Misdirected[] misdirected = new Served.Misdirected[1];
        cli.setExecutionExceptionHandler((e, line, parsed) -> {
            if (e instanceof Served.Misdirected m) {
                misdirected[0] = m;
                return ExitCode.ENVIRONMENT;
            }
            return fail(json, out, err, ExitCode.of(e), naming(line, Failure.sentence(e)));
        });
        cli.setParameterExceptionHandler((e, a) -> {
            if (json) {
                return fail(true, out, err, ExitCode.USAGE, UsageError.sentence(e));
            }
            UsageError.print(e, err);
            return ExitCode.USAGE;
        });
        int code;
        try {
            code = cli.execute(args);
        } finally {
            if (served != null) {
                letGo(cli);
                giveBack(args, cli);
            }
        }
        if (misdirected[0] != null) {
            // Nothing ran and nothing was printed: the serve answers 421 and the client runs it itself.
            throw misdirected[0];
        }
        return code;
    }

    /**
     * A serve makes each command's picocli model once and parses every later request of that
     * command with it (picocli sets every option and parameter back to its initial value before
     * it parses): making the model took a served publish about a sixth of its time, and a serve
     * just started ten milliseconds of each of its first requests when every thread of its pool
     * made its own. A model is not safe to share: a request borrows one (or makes one when all
     * are in use) and gives it back when done, so the serve keeps as many as ran at once.
     */
    private static final Map<String, Queue<CommandLine>> SERVED_LINES = new ConcurrentHashMap<>();

    private static Queue<CommandLine> kept(String name) {
        return SERVED_LINES.computeIfAbsent(name == null ? "" : name, k -> new ConcurrentLinkedQueue<>());
    }

    private static CommandLine borrowed(String[] args) {
        CommandLine cli = kept(CommandNames.subcommandOf(args)).poll();
        return cli != null ? cli : GatunCommand.commandLine(args);
    }

    private static void giveBack(String[] args, CommandLine cli) {
        kept(CommandNames.subcommandOf(args)).offer(cli);
    }

    /**
     * Makes the models of the commands a serve runs, before its first request: the first
     * publish of a serve just started should not wait for picocli to read its annotations.
     */
    public static void prepareServedCommands() {
        for (String name : CommandNames.SERVED) {
            String[] args = {name};
            giveBack(args, GatunCommand.commandLine(args));
        }
    }

    /** What a kept model holds between two requests instead of the last one's writers and handlers. */
    private static final PrintWriter NOWHERE = new PrintWriter(Writer.nullWriter());
    private static final CommandLine.IExecutionExceptionHandler NO_EXECUTION_HANDLER = (e, line, parsed) -> {
        throw e;
    };
    private static final CommandLine.IParameterExceptionHandler NO_PARAMETER_HANDLER = (e, a) -> {
        throw e;
    };

    /**
     * Lets a kept model drop the request it ran: its writers (and the handlers, which capture
     * them) hold the request's whole output, some 4 MiB for a bulk publish of 50,000 ports,
     * until the thread's next command of the same name, which may never come.
     */
    private static void letGo(CommandLine cli) {
        // The serve it ran for is not kept either: a kept model held the warm-up's driver, and
        // with it 10,000 events, until the model was next used.
        ((GatunCommand) cli.getCommand()).served = null;
        cli.setOut(NOWHERE);
        cli.setErr(NOWHERE);
        cli.setExecutionExceptionHandler(NO_EXECUTION_HANDLER);
        cli.setParameterExceptionHandler(NO_PARAMETER_HANDLER);
    }

    /**
     * {@code sentence} led by the command that failed ("publish: network n1 does not exist"), so
     * that a script's log names the operation as well as the bad value; unchanged when it names
     * the command already, or when the failure is the top level's own.
     */
    static String naming(CommandLine failed, String sentence) {
        String command = failed.getCommandSpec().qualifiedName(" ");
        int space = command.indexOf(' ');
        return space < 0 ? sentence : naming(command.substring(space + 1), sentence);
    }

    /** {@code sentence} led by {@code command} ("net create"), unless it names it already. */
    private static String naming(String command, String sentence) {
        return sentence.startsWith(command + ":") || sentence.startsWith(command + " ") ? sentence : command + ": " + sentence;
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
}
