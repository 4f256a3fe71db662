package dev.gatun.cli.command;

import dev.gatun.cli.service.Served;
import dev.gatun.cli.service.Version;
import dev.gatun.cli.wire.CommandNames;
import dev.gatun.facade.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.netns.NetworkNamespace;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/** The gatun command and its global options (given before the subcommand). */
@Command(name = "gatun", mixinStandardHelpOptions = true, versionProvider = Version.class,
        description = "Container networking over netlink: networks, endpoints and published ports on nftables.",
        // Lines under picocli's 80 columns: a longer one is wrapped again and reads broken.
        footer = {"", "Exit codes: 0 success; 1 the operation failed in the kernel or a tool;",
                "2 invalid usage or input (nothing was changed); 3 conflict (held by another",
                "owner, already exists, in use); 4 environment (missing privilege, library",
                "or kernel feature).",
                "", "Examples:", "  gatun demo", "  gatun net create n1 --subnet 10.88.0.0/16",
                "  gatun attach n1 c1", "  gatun publish n1 10.88.0.2 -p 8080:80 -p 53:53/udp", "  gatun --json ls"})
public final class GatunCommand {

    /**
     * The subcommands, in the order help lists them, made only when needed: picocli reads a
     * command's annotations when it is added, and reading all of them makes a one-shot publish
     * on the JVM path about 1.13x as long (README). Each name is the one in the class's own
     * @Command (a test checks).
     */
    static final Map<String, Supplier<Object>> SUBCOMMANDS = subcommands();

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> m = new LinkedHashMap<>();
        m.put("demo", DemoCommand::new);
        m.put("doctor", DoctorCommand::new);
        m.put("netns", NetnsCommand::new);
        m.put("net", NetCommand::new);
        m.put("attach", AttachCommand::new);
        m.put("detach", DetachCommand::new);
        m.put("publish", PublishCommand::new);
        m.put("unpublish", UnpublishCommand::new);
        m.put("ls", LsCommand::new);
        m.put("ruleset", RulesetCommand::new);
        m.put("serve", ServeCommand::new);
        m.put("events", EventsCommand::new);
        m.put("cni", CniCommand::new);
        m.put("netavark", NetavarkCommand::new);
        m.put("install", InstallCommand::new);
        m.put("uninstall", UninstallCommand::new);
        return m;
    }

    /**
     * The command line for {@code args}: with only the subcommand they name when they name one,
     * else (help, no subcommand, a misspelt one) with all of them, so help and suggestions are whole.
     */
    public static CommandLine commandLine(String[] args) {
        CommandLine cli = new CommandLine(new GatunCommand());
        String named = CommandNames.subcommandOf(args);
        if (named != null) {
            cli.addSubcommand(named, SUBCOMMANDS.get(named).get());
        } else {
            SUBCOMMANDS.forEach((name, make) -> cli.addSubcommand(name, make.get()));
        }
        return cli;
    }

    public enum DriverChoice { auto, nftables, iptables, iptables_legacy, iptables_nft }

    @Option(names = "--netns", paramLabel = "NAME|PATH", parameterConsumer = OptionValue.class,
            description = "The network namespace that plays the host (default: the current one).")
    String netns;

    @Option(names = "--driver", paramLabel = "DRIVER", converter = DriverConverter.class,
            description = "auto, nftables, iptables, iptables-legacy or iptables-nft (default: auto).")
    DriverChoice driver = DriverChoice.auto;

    @Option(names = "--json", description = "Print one JSON document on stdout.")
    boolean json;

    /** Set when this command runs inside a serve for a client (see {@link Served}). */
    Served served;

    NetworkNamespace host() {
        if (served != null && netns == null) {
            // The client found this serve by its own namespace; the API's paths name none.
            return served.host();
        }
        NetworkNamespace asked = netns == null ? NetworkNamespace.current() : NetworkNamespace.of(netns);
        if (served != null && asked.inode() != served.host().inode()) {
            // A serve for namespace A never executes a command meant for B.
            throw new Served.Misdirected("this serve runs for " + served.host().describe() + ", not " + asked.describe());
        }
        return served != null ? served.host() : asked;
    }

    /** The driver's name as Gatun.open takes it, with "auto" resolved for this host. */
    String driverName() {
        if (served != null) {
            String asked = driver.name().replace('_', '-');
            if (driver != DriverChoice.auto && !asked.equals(served.driverName())) {
                throw new Served.Misdirected("this serve runs driver " + served.driverName() + ", not " + asked);
            }
            return served.driverName();
        }
        return driver == DriverChoice.auto ? Gatun.choose(host()).driver() : driver.name().replace('_', '-');
    }

    GatunDriver driver() {
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
