package dev.gatun.cli;

import dev.gatun.Gatun;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.netns.NetworkNamespace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The gatun command and its global options (given before the subcommand). */
@Command(name = "gatun", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Container networking over netlink: networks, endpoints and published ports on nftables.",
        subcommands = {DemoCommand.class, DoctorCommand.class, NetnsCommand.class, NetCommand.class, AttachCommand.class,
                DetachCommand.class, PublishCommand.class, UnpublishCommand.class, LsCommand.class, RulesetCommand.class,
                ServeCommand.class},
        footer = {"", "Exit codes: 0 success; 1 the operation failed in the kernel or a tool; 2 invalid usage or input",
                "(nothing was changed); 3 conflict (held by another owner, already exists, in use);",
                "4 environment (missing privilege, library or kernel feature).",
                "", "Examples:", "  gatun demo", "  gatun net create n1 --subnet 10.88.0.0/16",
                "  gatun attach n1 c1", "  gatun publish n1 10.88.0.2 -p 8080:80 -p 53:53/udp", "  gatun --json ls"})
public final class GatunCommand {

    public enum DriverChoice { auto, nftables, iptables, iptables_legacy, iptables_nft }

    @Option(names = "--netns", paramLabel = "NAME|PATH",
            description = "The network namespace that plays the host (default: the current one).")
    String netns;

    @Option(names = "--driver", paramLabel = "DRIVER", converter = DriverConverter.class,
            description = "auto, nftables, iptables, iptables-legacy or iptables-nft (default: auto).")
    DriverChoice driver = DriverChoice.auto;

    @Option(names = "--json", description = "Print one JSON document on stdout.")
    boolean json;

    NetworkNamespace host() {
        return netns == null ? NetworkNamespace.current() : NetworkNamespace.of(netns);
    }

    /** The driver's name as Gatun.open takes it, with "auto" resolved for this host. */
    String driverName() {
        return driver == DriverChoice.auto ? Gatun.choose(host()).driver() : driver.name().replace('_', '-');
    }

    NetworkDriver driver() {
        return Gatun.open(host(), driverName());
    }

    static final class DriverConverter implements picocli.CommandLine.ITypeConverter<DriverChoice> {
        @Override
        public DriverChoice convert(String value) {
            try {
                return DriverChoice.valueOf(value.replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("unknown driver '" + value
                        + "' (expected auto, nftables, iptables, iptables-legacy or iptables-nft)");
            }
        }
    }
}
