package dev.gatun.cli;

import dev.gatun.cli.command.CommandLines;
import dev.gatun.cli.wire.ServeClient;
import dev.gatun.cli.cni.CniMain;
import dev.gatun.cli.netavark.NetavarkMain;

import java.io.PrintWriter;
import java.util.List;
import java.util.OptionalInt;

/** The gatun command: a CNI or netavark plugin call when it is one, else a line forwarded to a serve, else run here. */
public final class Main {

    private Main() {}

    public static void main(String[] args) {
        if (System.getenv("CNI_COMMAND") != null) {
            // Executed by a container runtime as a CNI plugin (a link named gatun in its CNI bin directory).
            System.exit(CniMain.run());
        }
        if (NetavarkMain.isPluginCall(args)) {
            // Executed by netavark, through the plugin file gatun netavark install made.
            System.exit(NetavarkMain.run(List.of(args).subList(1, args.length)));
        }
        OptionalInt served = ServeClient.forward(args, System.out, System.err);
        if (served.isPresent()) {
            System.exit(served.getAsInt());
        }
        System.exit(CommandLines.run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }
}
