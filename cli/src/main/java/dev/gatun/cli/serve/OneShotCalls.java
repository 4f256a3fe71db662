package dev.gatun.cli.serve;

import dev.gatun.cli.api.ForwardedCalls;
import dev.gatun.cli.wire.CommandNames;
import dev.gatun.cli.wire.ServeWire;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.cni.CniPlugin;
import dev.gatun.cli.events.EventCause;
import dev.gatun.cli.netavark.NetavarkPlugin;
import dev.gatun.cli.service.Drivers;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;

/**
 * Runs the one-shot calls a serve takes for a client ({@link ServeWire.Kind}): a command line as
 * the CLI runs it, a CNI call as the plugin does, a netavark plugin call, each with what it
 * printed and its exit code as the answer. Both of a serve's sockets run them here: the C
 * client's ({@link OneShotServer}) and the local API's paths for them ({@link LocalApi}). A call
 * that is not for a serve throws {@link Served.Misdirected}; one that cannot be read,
 * {@link Refused}: in both cases nothing ran.
 */
final class OneShotCalls implements ForwardedCalls {

    private final Served served;
    private final CommandLineRunner commandLines;
    private final Consumer<String> requestLog;
    private final CommandTally tally = new CommandTally();

    /** {@code commandLines} runs the command lines; {@code requestLog} (or null) gets a line per call run. */
    OneShotCalls(Served served, CommandLineRunner commandLines, Consumer<String> requestLog) {
        this.served = served;
        this.commandLines = commandLines;
        this.requestLog = requestLog;
    }

    /** Every call run so far, counted whether or not a request log is kept. */
    CommandTally tally() {
        return tally;
    }

    @Override
    public ServeWire.Printed run(ServeWire.Kind kind, byte[] body, String via) {
        return switch (kind) {
            case CLI -> commandLine(ServeWire.commandLine(body), via);
            case CNI -> {
                ServeWire.CniCall call = ServeWire.cniCall(body);
                yield tally.running(() -> cni(call), ServeWire.Printed::code);
            }
            case NETAVARK -> {
                ServeWire.NetavarkCall call = ServeWire.netavarkCall(body);
                yield tally.running(() -> netavark(call), ServeWire.Printed::code);
            }
        };
    }

    /** Runs a forwarded command line; the client prints stdout, then stderr, and exits with the code. */
    @Override
    public ServeWire.Printed commandLine(List<String> args, String via) {
        String name = CommandNames.subcommandOf(args.toArray(String[]::new));
        if (name == null || !CommandNames.SERVED.contains(name)) {
            throw new Served.Misdirected("'" + name + "' runs where it is typed, not in a serve");
        }
        return tally.running(() -> EventCause.as("gatun " + String.join(" ", args) + " (" + via + ")", () -> runLine(args)),
                ServeWire.Printed::code);
    }

    private ServeWire.Printed runLine(List<String> args) {
        // Into strings, encoded once at the end: a PrintWriter over a stream brings an encoder
        // and 24 KiB of buffers, which two per request made a third of what a serve allocated.
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = commandLines.run(args.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err), served);
        if (requestLog != null) {
            requestLog.accept("ran gatun " + String.join(" ", args) + ": exit " + code);
        }
        return new ServeWire.Printed(code, out.toString().getBytes(StandardCharsets.UTF_8),
                err.toString().getBytes(StandardCharsets.UTF_8));
    }

    private ServeWire.Printed cni(ServeWire.CniCall call) {
        CniPlugin.Outcome o = EventCause.as("CNI " + call.env().get("CNI_COMMAND") + " "
                        + call.env().getOrDefault("CNI_CONTAINERID", ""),
                () -> CniPlugin.run(call.env(), call.config(), Drivers.of(served.driver())));
        if (requestLog != null) {
            requestLog.accept("ran CNI " + call.env().get("CNI_COMMAND") + " " + call.env().getOrDefault("CNI_CONTAINERID", "")
                    + ": exit " + o.exitCode() + (o.errorCode() != 0 ? " (CNI error " + o.errorCode() + ")" : ""));
        }
        return new ServeWire.Printed(o.exitCode(), o.stdout(), o.stderr());
    }

    private ServeWire.Printed netavark(ServeWire.NetavarkCall call) {
        NetavarkPlugin.Outcome o = EventCause.as("netavark " + String.join(" ", call.args()),
                () -> NetavarkPlugin.run(call.args(), call.stdin(), Drivers.of(served.driver())));
        if (requestLog != null) {
            requestLog.accept("ran netavark " + String.join(" ", call.args()) + ": exit " + o.exitCode());
        }
        return new ServeWire.Printed(o.exitCode(), o.stdout(), o.stderr());
    }
}
