package dev.gatun.cli.command;

import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.service.GatunService;
import dev.gatun.driver.GatunDriver;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.Function;

/** What every subcommand shares: the global options, output, and a driver for the host namespace. */
abstract class Base implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /** Set instead of {@link #spec} when the command was read without picocli ({@link QuickLine}). */
    private Unparsed unparsed;

    /** The root and the writers of a command that picocli did not parse. */
    record Unparsed(GatunCommand root, PrintWriter out, PrintWriter err) {}

    /** Runs this command as read by {@link QuickLine}: {@code root} holds its global options. */
    final Integer callUnparsed(GatunCommand root, PrintWriter out, PrintWriter err) throws Exception {
        unparsed = new Unparsed(root, out, err);
        return call();
    }

    GatunCommand root() {
        return unparsed != null ? unparsed.root() : (GatunCommand) spec.root().userObject();
    }

    PrintWriter stdout() {
        return unparsed != null ? unparsed.out() : spec.commandLine().getOut();
    }

    PrintWriter stderr() {
        return unparsed != null ? unparsed.err() : spec.commandLine().getErr();
    }

    Output out() {
        return new Output(stdout(), root().json);
    }

    /**
     * The service for this command line: on its namespace, with the serve's driver when served,
     * else a driver opened for each operation.
     */
    GatunService service() {
        GatunCommand root = root();
        return new GatunService(root::host, new Drivers() {
            @Override
            public <T> T with(Function<? super GatunDriver, T> work) {
                return withDriver(work);
            }
        }, root.served != null);
    }

    /** Runs {@code work} with a driver for the host: the serve's own when served (never closed here), else a new one. */
    <T> T withDriver(Function<? super GatunDriver, T> work) {
        GatunCommand root = root();
        if (root.served != null) {
            root.host();
            root.driverName();
            return work.apply(root.served.driver());
        }
        try (GatunDriver d = root.driver()) {
            return work.apply(d);
        }
    }
}
