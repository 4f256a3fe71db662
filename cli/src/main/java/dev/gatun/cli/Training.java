package dev.gatun.cli;

import dev.gatun.cli.api.ServeClient;
import picocli.CommandLine;

import java.io.OutputStream;
import java.io.PrintWriter;

/**
 * The launcher's training run for the JVM's ahead-of-time cache: the given command (the demo as
 * root, else the read-only doctor), the doctor's report as JSON (Jackson is set up only for a
 * JSON document, so nothing else would put its classes in the cache), then every subcommand's
 * model and help, so that the classes of each command are in the cache although a run makes
 * only the one it names; and the look for a running serve that every JVM-path command makes
 * first (a read-only "ls", should one answer).
 */
public final class Training {

    private Training() {}

    public static void main(String[] args) {
        ServeClient.forward(new String[] {"ls"}, OutputStream.nullOutputStream(), OutputStream.nullOutputStream());
        PrintWriter discard = new PrintWriter(OutputStream.nullOutputStream(), true);
        int code = Main.run(args, discard, discard);
        Main.run(new String[] {"--json", "doctor"}, discard, discard);
        CommandLine all = GatunCommand.commandLine(new String[0]);
        all.usage(discard);
        all.getSubcommands().values().forEach(c -> c.usage(discard));
        System.exit(code);
    }
}
