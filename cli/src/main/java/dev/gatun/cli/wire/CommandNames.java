package dev.gatun.cli.wire;

import java.util.List;
import java.util.Set;

/**
 * What the client, a serve and the command line agree a command line is, from its words alone:
 * the subcommand it names past the global options, which subcommands a serve runs for a client,
 * and which of those may run at once or wait on connections.
 */
public final class CommandNames {

    /** Every subcommand, in the order help lists them (the command line makes exactly these: a test checks). */
    public static final List<String> ALL = List.of("demo", "doctor", "netns", "net", "attach", "detach", "publish",
            "unpublish", "ls", "ruleset", "serve", "events", "cni", "netavark", "install", "uninstall");

    /** Subcommands a serve runs for a client; the others (demo, netns, serve, bench) run where they were typed. */
    public static final Set<String> SERVED = Set.of("net", "attach", "detach", "publish", "unpublish", "ls", "ruleset",
            "doctor");

    /** The global options that take a value, which the search for the subcommand's name skips. */
    public static final Set<String> OPTIONS_WITH_VALUE = Set.of("--netns", "--driver");

    private CommandNames() {}

    /** The first argument that is neither a global option nor its value, if it names a subcommand; else null. */
    public static String subcommandOf(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (OPTIONS_WITH_VALUE.contains(a)) {
                i++;
            } else if (!a.startsWith("-")) {
                return ALL.contains(a) ? a : null;
            }
        }
        return null;
    }

    /**
     * Whether a command line may wait for a long time: an unpublish that drains waits until the
     * established connections through its ports end (up to its timeout). Such a call runs on a
     * thread of its own, so that drains cannot hold up publishes. A line this takes for one
     * wrongly ("--drain" as a value) only runs on a thread of its own, as it would.
     */
    public static boolean waitsOnConnections(List<String> args) {
        return waitsOnConnections(subcommandOf(args.toArray(String[]::new)), args);
    }

    private static boolean waitsOnConnections(String name, List<String> args) {
        return "unpublish".equals(name) && args.contains("--drain");
    }

    /**
     * Whether a command line is one the calls socket's own thread may run before it takes the
     * next call: a publish, or an unpublish that does not drain, whose work is one commit. Every
     * other call may take long, and not only by its size: a listing grows with the host, a drain
     * waits on connections, a CNI or netavark call or an attach creates links (and a CNI call
     * waits on its IPAM plugin).
     */
    public static boolean runsAtOnce(List<String> args) {
        String name = subcommandOf(args.toArray(String[]::new));
        return "publish".equals(name) || "unpublish".equals(name) && !waitsOnConnections(name, args);
    }
}
