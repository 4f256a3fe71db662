package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Attach;
import dev.gatun.driver.Endpoint;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Attach a container namespace to a network. */
@Command(name = "attach", mixinStandardHelpOptions = true,
        description = "Attach a container: a veth pair, the container end addressed, up, with a default route.",
        footer = {"", "Examples:", "  gatun attach n1 c1", "  gatun attach n1 /proc/4242/ns/net --ip 10.88.0.10 --owner web-1"})
final class AttachCommand extends Base {
    @Parameters(index = "0", paramLabel = "NET", description = "The network (gatun net ls).")
    String network;

    @Parameters(index = "1", paramLabel = "CONTAINER_NETNS", description = "A name under /run/netns or a path.")
    String container;

    @Option(names = "--ip", paramLabel = "IP", description = "IPv4 address (default: lowest free).")
    String ip;

    @Option(names = "--ip6", paramLabel = "IP", description = "IPv6 address (default: lowest free, if the network has IPv6).")
    String ip6;

    @Option(names = "--ifname", paramLabel = "NAME", description = "Interface name inside (default eth0).")
    String ifname;

    @Option(names = "--mac", paramLabel = "MAC", description = "MAC of the container's interface (default: 02:42 and the IPv4 address).")
    String mac;

    @Option(names = "--owner", paramLabel = "ID", description = "Owner of the endpoint (default: its IPv4 address).")
    String owner;

    @Override
    public Integer call() {
        Endpoint e = service().attach(Attach.of(network, container, ip, ip6, ifname, mac, owner));
        Output o = out();
        if (o.json()) {
            o.json(Json.endpoint(e));
        } else {
            o.line("attached " + container + " to " + network + ": " + e.ifname() + " " + Json.ip(e.ip())
                    + (e.ip6() == null ? "" : " " + Json.ip(e.ip6())) + " (MAC " + e.mac() + ", host end " + e.hostIfname()
                    + ")");
        }
        return ExitCode.OK;
    }
}
