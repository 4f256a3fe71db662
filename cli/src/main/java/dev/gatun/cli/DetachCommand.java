package dev.gatun.cli;

import dev.gatun.netns.NetworkNamespace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.Map;

/** Detach a container namespace from a network. */
@Command(name = "detach", mixinStandardHelpOptions = true,
        description = "Detach a container: removes its interface and the ports published to it.",
        footer = {"", "Examples:", "  gatun detach n1 c1"})
final class DetachCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_NETNS")
    String container;

    @Option(names = "--ifname", paramLabel = "NAME", description = "Interface name inside (default eth0).")
    String ifname;

    @Override
    public Integer call() {
        NetworkNamespace ns = NetworkNamespace.of(container);
        withDriver(d -> {
            d.detach(network, ns, ifname);
            return null;
        });
        Output o = out();
        if (o.json()) {
            o.json(Map.of("detached", container, "network", network));
        } else {
            o.line("detached " + container + " from " + network);
        }
        return ExitCode.OK;
    }
}
