package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.service.Publish;
import dev.gatun.cli.service.ReplacePorts;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Replacement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;

/** Publish container ports the way docker run -p does. */
@Command(name = "publish", mixinStandardHelpOptions = true,
        description = "Publish ports of a container address: one atomic transaction, no rule added.",
        footer = {"", "SPEC: [HOST_IP:][HOST_PORT[-END]:]CONTAINER_PORT[-END][/tcp|udp|sctp]",
                "IPv6 host addresses in brackets ([::1]:8080:80). Without HOST_PORT the host",
                "port is the container port.",
                "", "Examples:", "  gatun publish n1 10.88.0.2 -p 8080:80",
                "  gatun publish n1 10.88.0.2 -p 127.0.0.1:5432:5432 \\",
                "      -p 9000-9009:9000-9009/udp --owner db-1",
                "", "A host port that a socket of the host already listens on (TCP) or is bound",
                "to (UDP) is refused with exit code 3, naming the process; nothing is changed.",
                "", "--replace moves ports held by another owner to CONTAINER_IP in one transaction",
                "(a blue/green deploy: no connection is refused): new connections go to the new",
                "container, established ones stay with the old one until they close, and the old",
                "one's UDP flows of those ports are cut so the next datagram goes to the new one",
                "(--keep-udp-flows keeps them until they expire). CONTAINER_IP must be attached",
                "to NET. Each replaced mapping is printed with its owner and target.",
                "  gatun publish n1 10.88.0.3 -p 8080:80 --owner web-v2 --replace"})
final class PublishCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET", description = "The network of the container address.")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_IP", description = "The container's IPv4 or IPv6 address in NET.")
    String containerIp;

    @Option(names = "-p", required = true, paramLabel = "SPEC",
            parameterConsumer = OptionValue.class, description = "A port to publish; repeat for more.")
    List<String> specs;

    @Option(names = "--owner", paramLabel = "ID",
            parameterConsumer = OptionValue.class, description = "Owner of the mappings (default: CONTAINER_IP).")
    String owner;

    @Option(names = "--skip-host-port-check", description = "Publish without asking whether a socket of the host"
            + " holds the port: for a caller that reserves it itself (a CNI runtime).")
    boolean skipHostPortCheck;

    @Option(names = "--timing", description = "Also print how long the publish took, on stderr.")
    boolean timing;

    @Option(names = "--replace", description = "Take each port another owner holds on the same host address,"
            + " port and protocol, in the same transaction (see below).")
    boolean replace;

    @Option(names = "--keep-udp-flows", description = "With --replace: leave the old container's UDP flows of the"
            + " moved ports to expire, instead of cutting them.")
    boolean keepUdpFlows;

    @Override
    public Integer call() {
        Publish request = Publish.of(network, containerIp, specs, owner,
                skipHostPortCheck ? HostPortCheck.SKIP : HostPortCheck.CHECK);
        if (keepUdpFlows && !replace) {
            throw new InvalidInputException("publish: --keep-udp-flows is an option of --replace; nothing was changed");
        }
        long start = System.nanoTime();
        Replacement done = replace ? service().replace(new ReplacePorts(request, keepUdpFlows))
                : new Replacement(service().publish(request), List.of());
        long micros = (System.nanoTime() - start) / 1000;
        Output o = out();
        if (o.json()) {
            o.json(replace ? Json.replacement(done) : Json.mappings(done.published()));
        } else {
            for (PortMapping m : done.replaced()) {
                o.line("replaced " + m.describe() + " (owner " + m.owner() + ")");
            }
            for (PortMapping m : done.published()) {
                o.line("published " + m.describe() + " (owner " + m.owner() + ")");
            }
        }
        if (timing) {
            stderr().println("gatun: published in " + micros + " us" + (root().served != null
                    ? " by the running serve" : ", starting the driver included (bench/ measures a warm publish)"));
            stderr().flush();
        }
        return ExitCode.OK;
    }
}
