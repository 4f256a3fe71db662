package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.netns.NamedNamespaces;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;

/** Named network namespaces, the same ones ip netns sees. */
@Command(name = "netns", mixinStandardHelpOptions = true, description = "Make, remove and list named network namespaces.",
        subcommands = {NetnsCommand.Add.class, NetnsCommand.Del.class, NetnsCommand.Ls.class},
        footer = {"", "Examples:", "  gatun netns add c1", "  gatun netns ls", "  gatun netns del c1"})
final class NetnsCommand {

    @Command(name = "add", mixinStandardHelpOptions = true, description = "Create an empty named network namespace.")
    static final class Add extends Base {
        @Parameters(paramLabel = "NAME", description = "Name under /run/netns.")
        String name;

        @Override
        public Integer call() {
            NamedNamespaces.create(name);
            Output o = out();
            if (o.json()) {
                o.json(Map.of("netns", name));
            } else {
                o.line("created network namespace " + name);
            }
            return ExitCode.OK;
        }
    }

    @Command(name = "del", mixinStandardHelpOptions = true, description = "Delete a named network namespace.")
    static final class Del extends Base {
        @Parameters(paramLabel = "NAME", description = "Name under /run/netns.")
        String name;

        @Override
        public Integer call() {
            NamedNamespaces.delete(name);
            Output o = out();
            if (o.json()) {
                o.json(Map.of("deleted", name));
            } else {
                o.line("deleted network namespace " + name);
            }
            return ExitCode.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List named network namespaces.")
    static final class Ls extends Base {
        @Override
        public Integer call() {
            List<String> names = NamedNamespaces.list();
            Output o = out();
            if (o.json()) {
                o.json(names);
            } else {
                names.forEach(o::line);
            }
            return ExitCode.OK;
        }
    }
}
