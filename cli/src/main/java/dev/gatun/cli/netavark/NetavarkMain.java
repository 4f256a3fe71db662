package dev.gatun.cli.netavark;

import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.wire.ServeClient;

import java.io.IOException;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The netavark plugin in a process of its own ({@code gatun netavark VERB [NETNS]}, which the
 * plugin file runs): stdin in, the plugin's stdout and exit code out. Sent to the serve of this
 * namespace when one runs (the launcher's C client does that first; this is for a JVM path
 * without it), else run here.
 */
public final class NetavarkMain {

    /** What netavark runs; every other word after {@code netavark} is the CLI's (install, help). */
    static final Set<String> NOT_PLUGIN_CALLS = Set.of("install", "help", "-h", "--help");

    private NetavarkMain() {}

    /** Whether {@code args} (the whole command line) is a call of netavark's rather than of a user's. */
    public static boolean isPluginCall(String[] args) {
        return args.length >= 2 && args[0].equals("netavark") && !NOT_PLUGIN_CALLS.contains(args[1]);
    }

    /** Runs the call; {@code args} is the command line after {@code netavark}. Returns the exit code. */
    public static int run(List<String> args) {
        byte[] stdin;
        try {
            stdin = args.getFirst().equals("info") ? new byte[0] : System.in.readAllBytes();
        } catch (IOException e) {
            stdin = new byte[0];
        }
        OptionalInt served = ServeClient.forwardNetavark(args, stdin, System.out, System.err);
        if (served.isPresent()) {
            return served.getAsInt();
        }
        NetavarkPlugin.Outcome o = NetavarkPlugin.run(args, stdin, Drivers.IN_PROCESS);
        try {
            System.out.write(o.stdout());
            System.out.flush();
            System.err.write(o.stderr());
            System.err.flush();
        } catch (IOException e) {
            return 1;
        }
        return o.exitCode();
    }
}
