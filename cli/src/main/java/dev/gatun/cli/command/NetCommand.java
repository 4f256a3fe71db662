package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.CreateNetwork;
import dev.gatun.cli.service.DeleteNetwork;
import dev.gatun.driver.Network;
import dev.gatun.rtnl.Prefix;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;

/** Container networks. */
@Command(name = "net", mixinStandardHelpOptions = true, description = "Create, remove and list container networks.",
        subcommands = {NetCommand.Create.class, NetCommand.Rm.class, NetCommand.Ls.class})
final class NetCommand {

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = "Create a network: a bridge with a fixed MAC, gateway addresses, forwarding and firewall entries.",
            footer = {"", "Examples:", "  gatun net create n1 --subnet 10.88.0.0/16",
                    "  gatun net create n2 --subnet 10.89.0.0/16 --subnet fd00:89::/64 \\",
                    "      --no-icc --mtu 1400", "  gatun net create n3 --subnet 10.90.0.0/16 --counters"})
    static final class Create extends Base {
        @Parameters(paramLabel = "NAME", description = "The new network's name.")
        String name;

        @Option(names = "--subnet", required = true, paramLabel = "CIDR",
                description = "IPv4 subnet; give a second --subnet for IPv6.")
        List<String> subnets;

        @Option(names = "--bridge", paramLabel = "IFNAME", description = "Bridge name (default gatun-NAME).")
        String bridge;

        @Option(names = "--gateway", paramLabel = "IP", description = "IPv4 gateway (default: first address of the subnet).")
        String gateway;

        @Option(names = "--mac", paramLabel = "MAC", description = "Bridge MAC (default: random, locally administered).")
        String mac;

        @Option(names = "--mtu", paramLabel = "N",
                description = "MTU of the bridge and of every container interface on it, 68-65535 (default: the kernel's, 1500).")
        Integer mtu;

        @Option(names = "--no-icc", description = "Isolate containers of this network from each other.")
        boolean noIcc;

        @Option(names = "--internal", description = "No traffic in or out of the network.")
        boolean internal;

        @Option(names = "--counters",
                description = "Count the packets and bytes sent to each published port (shown by gatun ls --stats).")
        boolean counters;

        @Override
        public Integer call() {
            Network n = service().createNetwork(CreateNetwork.of(name, subnets, bridge, gateway, mac, mtu, !noIcc, internal,
                    counters));
            Output o = out();
            if (o.json()) {
                o.json(Json.network(n));
            } else {
                o.line("created network " + n.name() + ": bridge " + n.bridge() + " (MAC " + n.mac() + ", fixed), subnets "
                        + n.subnets() + ", gateways " + n.gateways().stream().map(Json::ip).toList()
                        + (n.counters() ? "; its published ports count their traffic (gatun ls --stats)" : ""));
            }
            return ExitCode.OK;
        }
    }

    @Command(name = "rm", mixinStandardHelpOptions = true, description = "Remove a network.",
            footer = {"", "Examples:", "  gatun net rm n1", "  gatun net rm n1 --force   # detaches its endpoints first"})
    static final class Rm extends Base {
        @Parameters(paramLabel = "NAME", description = "The network to remove.")
        String name;

        @Option(names = "--force", description = "Detach attached containers first.")
        boolean force;

        @Override
        public Integer call() {
            service().deleteNetwork(new DeleteNetwork(name, force));
            Output o = out();
            if (o.json()) {
                o.json(Json.deleted(name));
            } else {
                o.line("removed network " + name);
            }
            return ExitCode.OK;
        }
    }

    @Command(name = "ls", mixinStandardHelpOptions = true, description = "List networks.")
    static final class Ls extends Base {
        @Override
        public Integer call() {
            List<Network> networks = service().networks();
            Output o = out();
            if (o.json()) {
                o.json(networks.stream().map(Json::network).toList());
            } else {
                o.table(List.of("NAME", "BRIDGE", "MAC", "SUBNETS", "GATEWAYS", "ICC", "INTERNAL", "MTU", "COUNTERS"),
                        networks.stream().map(n -> List.of(n.name(), n.bridge(), String.valueOf(n.mac()),
                                String.join(",", n.subnets().stream().map(Prefix::toString).toList()),
                                String.join(",", n.gateways().stream().map(Json::ip).toList()),
                                n.icc() ? "yes" : "no", n.internal() ? "yes" : "no", Integer.toString(n.mtu()),
                                n.counters() ? "yes" : "no")).toList());
            }
            return ExitCode.OK;
        }
    }
}
