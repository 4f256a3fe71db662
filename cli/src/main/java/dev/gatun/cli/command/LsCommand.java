package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.ListPorts;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortTraffic;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.net.Inet4Address;
import java.util.ArrayList;
import java.util.List;

/** List published ports. */
@Command(name = "ls", mixinStandardHelpOptions = true, description = "List published ports, read from the kernel.",
        footer = {"", "Without NET also the ports published to addresses outside gatun's networks",
                "(a CNI chain after another plugin's bridge), with network '-' (null in JSON).",
                "", "--stats adds the packets and bytes sent to each port since it was published",
                "(replies not counted), for networks made with net create --counters; '-' (null",
                "in JSON) for the others.",
                "", "Examples:", "  gatun ls", "  gatun --json ls n1", "  gatun ls --stats n1"})
final class LsCommand extends Base {
    @Parameters(index = "0", arity = "0..1", paramLabel = "NET", description = "Only this network's (default: all).")
    String network;

    @Option(names = "--stats", description = "Show each port's packet and byte counts.")
    boolean stats;

    @Override
    public Integer call() {
        ListPorts request = new ListPorts(network);
        Output o = out();
        if (stats) {
            List<PortTraffic> all = service().traffic(request);
            if (o.json()) {
                o.json(Json.traffic(all));
            } else {
                o.table(List.of("NETWORK", "PROTO", "HOST", "CONTAINER", "OWNER", "PACKETS", "BYTES"), all.stream().map(t -> {
                    List<String> row = new ArrayList<>(columns(t.mapping()));
                    row.add(t.traffic() == null ? "-" : Long.toString(t.traffic().packets()));
                    row.add(t.traffic() == null ? "-" : Long.toString(t.traffic().bytes()));
                    return row;
                }).toList());
            }
            return ExitCode.OK;
        }
        List<PortMapping> all = service().ports(request);
        if (o.json()) {
            o.json(Json.mappings(all));
        } else {
            o.table(List.of("NETWORK", "PROTO", "HOST", "CONTAINER", "OWNER"), all.stream().map(LsCommand::columns).toList());
        }
        return ExitCode.OK;
    }

    private static List<String> columns(PortMapping m) {
        return List.of(m.network() == null ? "-" : m.network(), m.protocol().keyword(), host(m), container(m), m.owner());
    }

    private static String container(PortMapping m) {
        String ip = Json.ip(m.containerIp());
        return (m.containerIp() instanceof Inet4Address ? ip : "[" + ip + "]") + ":" + m.containerPort();
    }

    static String host(PortMapping m) {
        if (m.hostIp() == null) {
            return "*:" + m.hostPort();
        }
        String ip = Json.ip(m.hostIp());
        return (m.hostIp() instanceof Inet4Address ? ip : "[" + ip + "]") + ":" + m.hostPort();
    }
}
