package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.InetText;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.service.Drained;
import dev.gatun.cli.service.Unpublish;
import dev.gatun.driver.PortMapping;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.List;

/** Remove published ports. */
@Command(name = "unpublish", mixinStandardHelpOptions = true,
        description = "Remove the owner's published ports of a container address: the given ones, or all of them.",
        footer = {"", "Examples:", "  gatun unpublish n1 10.88.0.2 -p 8080:80", "  gatun unpublish n1 10.88.0.2 --owner db-1",
                "  gatun unpublish n1 10.88.0.2 --owner web-v1 --drain --timeout 30",
                "", "--drain removes the mappings for new connections at once, then waits",
                "until no established TCP connection through them remains, or the timeout:",
                "then it says how many did, and still exits 0 (--json: \"remaining\")."})
final class UnpublishCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET", description = "The network of the container address.")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_IP", description = "The container address they were published to.")
    String containerIp;

    @Option(names = "-p", paramLabel = "SPEC",
            parameterConsumer = OptionValue.class, description = "A port to remove; without -p, all of the owner's.")
    List<String> specs = List.of();

    @Option(names = "--owner", paramLabel = "ID",
            parameterConsumer = OptionValue.class, description = "Owner of the mappings (default: CONTAINER_IP).")
    String owner;

    @Option(names = "--drain", description = "Return once the established connections through them have ended.")
    boolean drain;

    @Option(names = "--timeout", paramLabel = "S", description = "With --drain: wait at most S seconds (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds = 60;

    @Override
    public Integer call() {
        Unpublish request = Unpublish.of(network, containerIp, specs, owner);
        if (!drain && timeoutGiven()) {
            throw new InvalidInputException("unpublish: --timeout " + timeoutSeconds + " is a --drain's wait, and this "
                    + "unpublish does not drain (add --drain, or leave --timeout out); nothing was changed");
        }
        if (timeoutSeconds <= 0) {
            throw new InvalidInputException("unpublish: --timeout " + timeoutSeconds + " is not a number of seconds "
                    + "(1 or more); nothing was changed");
        }
        if (drain) {
            return drained(request, service().unpublishAndDrain(request, Duration.ofSeconds(timeoutSeconds)));
        }
        List<PortMapping> removed = service().unpublish(request);
        Output o = out();
        if (o.json()) {
            o.json(Json.mappings(removed));
        } else {
            for (PortMapping m : removed) {
                o.line("unpublished " + m.describe());
            }
            if (removed.isEmpty()) {
                o.line(nothingFound(request));
            }
        }
        return ExitCode.OK;
    }

    /** Whether the line named --timeout (a line {@link QuickLine} read never does). */
    private boolean timeoutGiven() {
        return spec != null && spec.commandLine().getParseResult().hasMatchedOption("--timeout");
    }

    private int drained(Unpublish request, Drained d) {
        Output o = out();
        if (o.json()) {
            o.json(Json.drained(d));
            return ExitCode.OK;
        }
        for (PortMapping m : d.removed()) {
            o.line("unpublished " + m.describe());
        }
        if (d.removed().isEmpty()) {
            o.line(nothingFound(request));
        } else if (d.remaining() == 0) {
            o.line("drained: no established connection through them remains");
        } else {
            o.line("timeout after " + timeoutSeconds + " s: " + d.remaining() + " established connection"
                    + (d.remaining() == 1 ? "" : "s") + " through them remain");
        }
        return ExitCode.OK;
    }

    /**
     * What an unpublish of all an owner's ports that found none says: the owner, address and
     * network it looked in (exit 0: nothing is left to remove). A port named with -p and not
     * published is refused instead.
     */
    private static String nothingFound(Unpublish r) {
        return "nothing to unpublish: owner " + PortMapping.ownerOr(r.owner(), r.containerIp()) + " has no port published to "
                + InetText.of(r.containerIp()) + " in " + r.network();
    }
}
