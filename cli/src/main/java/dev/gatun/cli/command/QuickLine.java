package dev.gatun.cli.command;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Reads the command lines a serve runs most, a publish or an unpublish in their plain form,
 * without picocli; any other line is left to picocli ({@link #read} answers null).
 *
 * <p>Why: in a serve that sat idle between two commands (the CI host's case: one command, then
 * the engine's own work), picocli's parse of a one-port publish took 180 to 210 us of the call,
 * against 27 when it ran back to back: it is a long path through code that went cold, and it
 * builds four exceptions with their stack traces when it asks whether the positional parameters
 * look like numbers. The plain form is read here in a few microseconds.
 *
 * <p>The plain form: {@code [--json] [--netns NAME] publish|unpublish NET CONTAINER_IP} (the two
 * global options in either order, the namespace not named as a command) with, anywhere after the
 * command, {@code -p SPEC} (repeated), {@code --owner ID} once, and each of the command's flags
 * once; every parameter and value neither empty nor starting with "-" or "@" (an option, the end
 * of options, an argument file). Such a line means the same to picocli; {@code QuickLineTest} holds
 * the two to it over generated lines.
 */
final class QuickLine {

    private QuickLine() {}

    private static final Set<String> PUBLISH_FLAGS = Set.of("--skip-host-port-check", "--timing", "--replace",
            "--keep-udp-flows");

    /**
     * A plain line read: the command's name, its global options (--json, --netns or null), and
     * the command with its fields set as picocli would have set them.
     */
    record Read(String name, boolean json, String netns, Base command) {}

    /** What {@code args} say, or null if they are not a plain line. */
    static Read read(String[] args) {
        int at = 0;
        boolean json = false;
        String netns = null;
        for (; at < args.length && args[at].startsWith("-"); at++) {
            if (args[at].equals("--json") && !json) {
                json = true;
            } else if (args[at].equals("--netns") && netns == null && at + 1 < args.length && plain(args[at + 1])
                    && !GatunCommand.SUBCOMMANDS.containsKey(args[at + 1])) {
                netns = args[++at];
            } else {
                return null;
            }
        }
        if (at == args.length) {
            return null;
        }
        String name = args[at];
        return switch (name) {
            case "publish" -> {
                Said said = Said.of(args, at + 1, PUBLISH_FLAGS);
                yield said == null || said.specs.isEmpty() ? null : new Read(name, json, netns, publish(said));
            }
            case "unpublish" -> {
                Said said = Said.of(args, at + 1, Set.of());
                yield said == null ? null : new Read(name, json, netns, unpublish(said));
            }
            default -> null;
        };
    }

    private static PublishCommand publish(Said said) {
        PublishCommand c = new PublishCommand();
        c.network = said.positionals.get(0);
        c.containerIp = said.positionals.get(1);
        c.specs = said.specs;
        c.owner = said.owner;
        c.skipHostPortCheck = said.flags.contains("--skip-host-port-check");
        c.timing = said.flags.contains("--timing");
        c.replace = said.flags.contains("--replace");
        c.keepUdpFlows = said.flags.contains("--keep-udp-flows");
        return c;
    }

    private static UnpublishCommand unpublish(Said said) {
        UnpublishCommand c = new UnpublishCommand();
        c.network = said.positionals.get(0);
        c.containerIp = said.positionals.get(1);
        if (!said.specs.isEmpty()) {
            c.specs = said.specs;
        }
        c.owner = said.owner;
        return c;
    }

    /** What the tokens after the command's name say. */
    private record Said(List<String> positionals, List<String> specs, String owner, Set<String> flags) {

        /** Null unless every token is a known option with a plain value, a flag given once, or one of two parameters. */
        static Said of(String[] args, int from, Set<String> flagNames) {
            List<String> positionals = new ArrayList<>(2);
            List<String> specs = new ArrayList<>(1);
            String owner = null;
            Set<String> flags = new HashSet<>(4);
            for (int i = from; i < args.length; i++) {
                String a = args[i];
                if (a.equals("-p") || a.equals("--owner")) {
                    if (i + 1 == args.length || !plain(args[i + 1])) {
                        return null;
                    }
                    String value = args[++i];
                    if (a.equals("-p")) {
                        specs.add(value);
                    } else if (owner == null) {
                        owner = value;
                    } else {
                        return null;
                    }
                } else if (flagNames.contains(a)) {
                    if (!flags.add(a)) {
                        return null;
                    }
                } else if (plain(a) && positionals.size() < 2) {
                    positionals.add(a);
                } else {
                    return null;
                }
            }
            return positionals.size() == 2 ? new Said(positionals, specs, owner, flags) : null;
        }
    }

    /** A token picocli takes as it stands wherever it is: not an option, "--" or an argument file. */
    private static boolean plain(String token) {
        return !token.isEmpty() && token.charAt(0) != '-' && token.charAt(0) != '@';
    }
}
