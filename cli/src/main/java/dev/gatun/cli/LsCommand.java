package dev.gatun.cli;

import dev.gatun.cli.service.ListPorts;
import dev.gatun.driver.PortMapping;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.net.Inet4Address;
import java.util.List;

/** List published ports. */
@Command(name = "ls", mixinStandardHelpOptions = true, description = "List published ports, read from the kernel.",
        footer = {"", "Without NET also the ports published to addresses outside gatun's networks",
                "(a CNI chain after another plugin's bridge), with network '-' (null in JSON).",
                "", "Examples:", "  gatun ls", "  gatun --json ls n1"})
final class LsCommand extends Base {
    @Parameters(index = "0", arity = "0..1", paramLabel = "NET")
    String network;

    @Override
    public Integer call() {
        List<PortMapping> all = service().ports(new ListPorts(network));
        Output o = out();
        if (o.json()) {
            o.json(Json.mappings(all));
        } else {
            o.table(List.of("NETWORK", "PROTO", "HOST", "CONTAINER", "OWNER"), all.stream().map(m -> List.of(
                    m.network() == null ? "-" : m.network(),
                    m.protocol().keyword(), host(m), container(m), m.owner())).toList());
        }
        return ExitCode.OK;
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
