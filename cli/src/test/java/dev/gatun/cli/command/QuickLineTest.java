package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Served;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.Replacement;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.StandInDriver;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link QuickLine} reads a line only when picocli reads it the same way: every field of the
 * command (and --json) as picocli sets it, and then the same run (output, exit code, what the
 * driver was asked). The lines are made of the tokens that make picocli decide differently
 * (options in every spelling, "--", argument files, subcommands, values that look like options)
 * and of plain lines in every order, which it must read.
 */
class QuickLineTest {

    private static final List<String> TOKENS = List.of("-p", "--owner", "8080:80", "127.0.0.1:53:53/udp", "web-1",
            "n1", "10.88.0.2", "fd00::2", "--replace", "--keep-udp-flows", "--timing", "--skip-host-port-check",
            "--drain", "--timeout", "3", "--json", "--", "-h", "--help", "-V", "@args", "", "-p81:81", "-p=82:82",
            "--owner=o2", "--netns", "h1", "--netns=h2", "--driver", "publish", "unpublish", "ls", "-x", "--nope", "-5");

    /**
     * Plain lines with one or two tokens put in or written over (anywhere, the command's name
     * and --json too): as many lines just off the plain form as on it.
     */
    @Provide
    Arbitrary<List<String>> anyLines() {
        // Half the tokens from those a plain line has, so that many edited lines are still plain.
        Arbitrary<String> token = Arbitraries.oneOf(Arbitraries.of(TOKENS), Arbitraries.of("-p", "--owner", "9090:90",
                "web-2", "n2", "publish", "unpublish", "--replace", "--timing", "10.88.0.3"));
        Arbitrary<Edit> edit = Combinators.combine(token, Arbitraries.integers().between(0, 30),
                Arbitraries.of(true, false)).as(Edit::new);
        return Combinators.combine(plainLines(), edit.list().ofMinSize(1).ofMaxSize(2)).as((line, edits) -> {
            List<String> edited = new ArrayList<>(line);
            for (Edit e : edits) {
                int at = e.at() % (edited.size() + 1);
                if (e.insert() || at == edited.size()) {
                    edited.add(at, e.token());
                } else {
                    edited.set(at, e.token());
                }
            }
            return edited;
        });
    }

    private record Edit(String token, int at, boolean insert) {}

    /** Where a plain line has one of its two parameters. */
    private static final List<String> PARAMETER = new ArrayList<>(List.of("NET or CONTAINER_IP"));

    /** Plain lines: the two parameters and any options of the command, in any order. */
    @Provide
    Arbitrary<List<String>> plainLines() {
        Arbitrary<List<List<String>>> options = Arbitraries.of(List.of("-p", "8080:80"), List.of("-p", "53:53/udp"),
                List.of("-p", "[::1]:9000-9009:9000-9009/sctp"), List.of("--owner", "web-1"), List.of("--owner", "publish"),
                List.of("--replace"), List.of("--keep-udp-flows"), List.of("--timing"), List.of("--skip-host-port-check"))
                .list().uniqueElements().ofMaxSize(6);
        Arbitrary<List<String>> global = Arbitraries.of(List.<String>of(), List.of("--json"), List.of("--netns", "h1"),
                List.of("--json", "--netns", "h1"), List.of("--netns", "/run/netns/h1", "--json"));
        return Combinators.combine(global, Arbitraries.of("publish", "unpublish"), options, Arbitraries.longs())
                .as((globals, command, opts, seed) -> {
                    List<List<String>> parts = new ArrayList<>(opts);
                    // --owner once: a second is picocli's to refuse.
                    parts.removeIf(p -> p.getFirst().equals("--owner") && p != opts.stream()
                            .filter(o -> o.getFirst().equals("--owner")).findFirst().orElseThrow());
                    if (command.equals("publish") && parts.stream().noneMatch(p -> p.getFirst().equals("-p"))) {
                        parts.add(List.of("-p", "8080:80"));
                    }
                    if (command.equals("unpublish")) {
                        parts.removeIf(p -> p.getFirst().startsWith("--") && !p.getFirst().equals("--owner"));
                    }
                    parts.add(PARAMETER);
                    parts.add(PARAMETER);
                    Collections.shuffle(parts, new Random(seed));
                    // The two parameters in their order, wherever the shuffle put them.
                    List<String> line = new ArrayList<>(globals);
                    line.add(command);
                    boolean first = true;
                    for (List<String> p : parts) {
                        if (p == PARAMETER) {
                            line.add(first ? "n1" : "10.88.0.2");
                            first = false;
                        } else {
                            line.addAll(p);
                        }
                    }
                    return line;
                });
    }

    @Property(tries = 3000)
    void readsOnlyWhatPicocliReadsTheSame(@ForAll("anyLines") List<String> line) {
        String[] args = line.toArray(String[]::new);
        QuickLine.Read quick = QuickLine.read(args);
        Statistics.label("read").collect(quick != null);
        if (quick != null) {
            assertThat(fields(quick)).as("%s", line).isEqualTo(picocli(args));
        }
        // Both sides of the line between plain and not are tried, and many of each.
        Statistics.label("read").coverage(c -> {
            c.check(true).count(n -> n >= 100);
            c.check(false).count(n -> n >= 1000);
        });
    }

    @Property(tries = 1000)
    void readsEveryPlainLine(@ForAll("plainLines") List<String> line) {
        String[] args = line.toArray(String[]::new);
        QuickLine.Read quick = QuickLine.read(args);
        assertThat(quick).as("%s", line).isNotNull();
        assertThat(fields(quick)).as("%s", line).isEqualTo(picocli(args));
    }

    @Example
    void leavesTheRestToPicocli() {
        for (String[] args : List.of(new String[] {"publish", "n1", "10.88.0.2"}, new String[] {"publish", "n1", "-p", "80"},
                new String[] {"unpublish", "n1", "10.88.0.2", "--drain"},
                new String[] {"publish", "n1", "x", "-p", "80", "--owner", "a", "--owner", "b"},
                new String[] {"publish", "n1", "x", "-p", "80", "--replace", "--replace"},
                new String[] {"publish", "n1", "x", "-p", "80", "--", "y"}, new String[] {"publish", "n1", "x", "-p", "@f"},
                new String[] {"--netns", "publish", "publish", "n1", "x", "-p", "80"},
                new String[] {"--netns", "a", "--netns", "b", "publish", "n1", "x", "-p", "80"},
                new String[] {"--driver", "nftables", "publish", "n1", "x", "-p", "80"},
                new String[] {"ls"}, new String[] {"publish", "n1", "x", "y", "-p", "80"}, new String[] {"publish", "--help"})) {
            assertThat(QuickLine.read(args)).as(String.join(" ", args)).isNull();
        }
    }

    // --- the same run --------------------------------------------------------------------------

    private final List<String> asked = new ArrayList<>();

    private GatunDriver recording() {
        return StandInDriver.answering(Map.of(
                "publish", args -> {
                    // A request's record prints every field, so that two runs asking differently differ here.
                    asked.add("publish " + Arrays.asList(args));
                    PortRequest r = (PortRequest) args[0];
                    if (r.network().equals("busy")) {
                        throw new ConflictException("host port 8080/tcp is published to 10.88.0.9 (owner other)");
                    }
                    return mappings(r);
                },
                "unpublish", args -> {
                    asked.add("unpublish " + Arrays.asList(args));
                    return mappings((PortRequest) args[0]);
                },
                "replace", args -> {
                    asked.add("replace " + Arrays.asList(args));
                    List<PortMapping> published = mappings((PortRequest) args[0]);
                    InetAddress old = InetAddress.getByName("10.88.0.9");
                    return new Replacement(published, published.stream().map(m -> new PortMapping(m.network(),
                            m.protocol(), m.hostIp(), m.hostPort(), old, m.containerPort(), "old")).toList());
                }));
    }

    private static List<PortMapping> mappings(PortRequest r) {
        InetAddress ip = r.containerIp();
        String owner = PortMapping.ownerOr(r.owner(), ip);
        return r.ports().stream().map(p -> new PortMapping(r.network(), p.protocol(), p.hostIp(), p.hostStart(), ip,
                p.containerStart(), owner)).toList();
    }

    private record Ran(int code, String out, String err, List<String> asked) {}

    private Ran run(boolean quick, String... args) {
        asked.clear();
        Served served = new Served(NetworkNamespace.current(), "nftables", recording());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        PrintWriter o = new PrintWriter(out, true);
        PrintWriter e = new PrintWriter(err, true);
        int code = quick ? CommandLines.run(args, o, e, served) : CommandLines.runParsed(args, o, e, served);
        // --timing prints how long the publish took: the number differs from run to run.
        return new Ran(code, out.toString(), err.toString().replaceAll("in \\d+ us", "in N us"), List.copyOf(asked));
    }

    @Example
    void runsAsPicocliRunsIt() {
        List<String[]> lines = List.of(
                new String[] {"publish", "n1", "10.88.0.2", "-p", "8080:80"},
                new String[] {"--json", "publish", "n1", "10.88.0.2", "-p", "8080:80", "-p", "53:53/udp", "--owner", "w"},
                new String[] {"publish", "-p", "[::1]:9000-9001:90-91/sctp", "n1", "fd00::2", "--timing"},
                new String[] {"publish", "n1", "10.88.0.2", "-p", "8080:80", "--replace", "--keep-udp-flows"},
                new String[] {"--json", "publish", "n1", "10.88.0.2", "-p", "8080:80", "--replace"},
                new String[] {"publish", "n1", "10.88.0.2", "-p", "8080:80", "--keep-udp-flows"},
                new String[] {"publish", "n1", "10.88.0.2", "-p", "99999:80"},
                new String[] {"--json", "publish", "n1", "10.88.0.300", "-p", "80"},
                new String[] {"publish", "busy", "10.88.0.2", "-p", "8080:80"},
                new String[] {"--json", "publish", "busy", "10.88.0.2", "-p", "8080:80"},
                new String[] {"unpublish", "n1", "10.88.0.2", "-p", "8080:80"},
                new String[] {"unpublish", "n1", "10.88.0.2", "--owner", "w"},
                new String[] {"--json", "unpublish", "n1", "10.88.0.2"},
                new String[] {"unpublish", "n1", "10.88.0.2", "-p", "80/icmp"},
                new String[] {"--netns", "/proc/self/ns/net", "publish", "n1", "10.88.0.2", "-p", "8080:80"},
                new String[] {"--json", "--netns", "gatun-test-no-such-namespace", "publish", "n1", "10.88.0.2", "-p", "80"});
        for (String[] args : lines) {
            assertThat(QuickLine.read(args)).as("a plain line: %s", String.join(" ", args)).isNotNull();
            Ran quick = run(true, args);
            Ran parsed = run(false, args);
            assertThat(quick).as(String.join(" ", args)).isEqualTo(parsed);
        }
        // The comparison compares runs that did something, failed and succeeded.
        Ran conflict = run(true, "publish", "busy", "10.88.0.2", "-p", "8080:80");
        assertThat(conflict.code()).as(conflict.toString()).isEqualTo(ExitCode.CONFLICT);
        assertThat(run(true, "publish", "n1", "10.88.0.2", "-p", "99999:80").code()).isEqualTo(ExitCode.USAGE);
        assertThat(run(true, "publish", "n1", "10.88.0.2", "-p", "8080:80").out())
                .isEqualTo("published *:8080 -> 10.88.0.2:80/tcp (owner 10.88.0.2)\n");
    }

    // --- helpers -------------------------------------------------------------------------------

    /** The command's picocli-annotated fields and --json, as picocli set them; or why it refused. */
    private static Map<String, Object> picocli(String[] args) {
        CommandLine cli = GatunCommand.commandLine(args);
        try {
            CommandLine.ParseResult parsed = cli.parseArgs(args);
            if (!parsed.hasSubcommand()) {
                return Map.of("parsed", "no command");
            }
            CommandLine.ParseResult sub = parsed.subcommand();
            if (parsed.isUsageHelpRequested() || parsed.isVersionHelpRequested() || sub.isUsageHelpRequested()
                    || sub.isVersionHelpRequested()) {
                return Map.of("parsed", "help");
            }
            GatunCommand root = (GatunCommand) cli.getCommand();
            return fields(sub.commandSpec().name(), root.json, root.netns, sub.commandSpec().userObject());
        } catch (CommandLine.ParameterException e) {
            return Map.of("refused", e.getMessage());
        }
    }

    private static Map<String, Object> fields(QuickLine.Read read) {
        return fields(read.name(), read.json(), read.netns(), read.command());
    }

    private static Map<String, Object> fields(String name, boolean json, String netns, Object command) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("command", name);
        m.put("--json", json);
        m.put("--netns", netns);
        for (Field f : command.getClass().getDeclaredFields()) {
            if (f.isAnnotationPresent(Option.class) || f.isAnnotationPresent(Parameters.class)) {
                try {
                    f.setAccessible(true);
                    m.put(f.getName(), f.get(command));
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return m;
    }

}
