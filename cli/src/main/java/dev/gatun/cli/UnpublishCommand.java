package dev.gatun.cli;

import dev.gatun.cli.service.Unpublish;
import dev.gatun.driver.PortMapping;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;

/** Remove published ports. */
@Command(name = "unpublish", mixinStandardHelpOptions = true,
        description = "Remove the owner's published ports of a container address: the given ones, or all of them.",
        footer = {"", "Examples:", "  gatun unpublish n1 10.88.0.2 -p 8080:80", "  gatun unpublish n1 10.88.0.2 --owner db-1"})
final class UnpublishCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_IP")
    String containerIp;

    @Option(names = "-p", paramLabel = "SPEC", description = "A port to remove; without -p, all of the owner's.")
    List<String> specs = List.of();

    @Option(names = "--owner", paramLabel = "ID", description = "Owner of the mappings (default: CONTAINER_IP).")
    String owner;

    @Override
    public Integer call() {
        List<PortMapping> removed = service().unpublish(Unpublish.of(network, containerIp, specs, owner));
        Output o = out();
        if (o.json()) {
            o.json(Json.mappings(removed));
        } else {
            for (PortMapping m : removed) {
                o.line("unpublished " + m.describe());
            }
            if (removed.isEmpty()) {
                o.line("nothing was published by that owner");
            }
        }
        return ExitCode.OK;
    }
}
