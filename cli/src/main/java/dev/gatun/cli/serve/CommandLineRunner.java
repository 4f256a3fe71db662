package dev.gatun.cli.serve;

import dev.gatun.cli.service.Served;

import java.io.PrintWriter;

/**
 * Runs one command line as the CLI runs it, for a serve that runs it on a client's behalf: the
 * command line's own code, handed to the serve by the command that starts it, so that the serve
 * depends on no command.
 */
@FunctionalInterface
public interface CommandLineRunner {

    /** Its exit code; what it prints goes to {@code out} and {@code err}. */
    int run(String[] args, PrintWriter out, PrintWriter err, Served served);
}
