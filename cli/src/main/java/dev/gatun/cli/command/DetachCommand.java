package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Detach;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Detach a container namespace from a network. */
@Command(name = "detach", mixinStandardHelpOptions = true,
        description = "Detach a container: removes its interface and the ports published to it.",
        footer = {"", "Examples:", "  gatun detach n1 c1"})
final class DetachCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET", description = "The network it was attached to.")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_NETNS", description = "A name under /run/netns or a path.")
    String container;

    @Option(names = "--ifname", paramLabel = "NAME", description = "Interface name inside (default eth0).")
    String ifname;

    @Override
    public Integer call() {
        service().detach(Detach.of(network, container, ifname));
        Output o = out();
        if (o.json()) {
            o.json(Json.detached(container, network));
        } else {
            o.line("detached " + container + " from " + network);
        }
        return ExitCode.OK;
    }
}
