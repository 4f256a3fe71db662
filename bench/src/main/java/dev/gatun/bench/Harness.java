package dev.gatun.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gatun.facade.Gatun;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.rtnl.Prefix;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * gatun and its peers on the same work, in one run, interleaved sample by sample so that a
 * noisy machine slows all of them alike; medians, minimums, maximums and ratios.
 */
@Command(name = "gatun bench", mixinStandardHelpOptions = true,
        description = "Measure publishing with gatun against the C floor, nft, Docker-style iptables and Docker's nftables shape.",
        footer = {"", "Read ratios, not absolute times: they hold when the machine's speed drifts.",
                "", "Examples:", "  sudo ./gatun bench --quick", "  sudo ./gatun bench --json --out /tmp/results",
                "  sudo ./gatun bench --soak --cycles 20000", "  sudo ./gatun bench --bulk --rounds 9",
                "  sudo ./gatun bench --udp-publish --conntrack-entries 100000"})
public final class Harness implements Callable<Integer> {

    @Option(names = "--quick", description = "A short smoke run (under two minutes): fewer samples, up to 1,000 mappings.")
    boolean quick;

    @Option(names = "--json", description = "Print one JSON document instead of the table.")
    boolean json;

    @Option(names = "--soak", description = "Instead of the comparison: publish/unpublish cycles through a gatun serve from"
            + " many clients, its memory, descriptors and threads and the kernel's elements sampled; each must end within"
            + " 10%% of its baseline, and nothing may be left behind (not run by the normal or the quick run).")
    boolean soak;

    @Option(names = "--cycles", paramLabel = "N", description = "Publish/unpublish cycles of the soak (default: ${DEFAULT-VALUE}).")
    int cycles = Soak.DEFAULT_CYCLES;

    @Option(names = "--clients", paramLabel = "N", description = "Clients of the soak, at once (default: ${DEFAULT-VALUE}).")
    int clients = Soak.DEFAULT_CLIENTS;

    @Option(names = "--bulk", description = "Instead of the comparison: only the bulk publish, gatun's one call against"
            + " the C floor's one batch of the same mappings, in turn (a step of the normal run, alone).")
    boolean bulkOnly;

    @Option(names = "--mappings", paramLabel = "N", description = "Mappings of the bulk publish and of --footprint (default: ${DEFAULT-VALUE}).")
    int bulkMappings = 100_000;

    @Option(names = "--rounds", paramLabel = "N", description = "Measured rounds of the bulk publish (default: ${DEFAULT-VALUE}).")
    int bulkRounds = 5;

    @Option(names = "--fresh-serve", description = "Instead of the comparison: only a serve just started, its 1st, 10th"
            + " and 100th forwarded publish against its warm figure (a step of the normal run, alone).")
    boolean freshServeOnly;

    @Option(names = "--footprint", description = "Instead of the comparison: only the serve's memory, idle and with"
            + " --mappings published through it (default here: 100000), and its repair after nft flush ruleset (a step"
            + " of the normal run, alone).")
    boolean footprintOnly;

    @Option(names = "--udp-publish", description = "Instead of the comparison: only a UDP and a TCP publish beside"
            + " --conntrack-entries unrelated conntrack entries, against none (a step of the normal run, alone).")
    boolean udpPublishOnly;

    @Option(names = "--conntrack-entries", paramLabel = "N", description = "Unrelated conntrack entries beside the UDP"
            + " publish (default: ${DEFAULT-VALUE}; 10000 in the quick run).")
    int conntrackEntries = 100_000;

    @Option(names = "--requests", paramLabel = "N", description = "Publishes sent to each fresh serve (default: ${DEFAULT-VALUE}).")
    int freshRequests = 2_000;

    @Option(names = "--serves", paramLabel = "N", description = "Fresh serves of each shape, in turns; their medians are"
            + " reported (default: ${DEFAULT-VALUE}; 1 in the quick run).")
    int freshServes = 3;

    @Option(names = "--out", paramLabel = "DIR", description = "Where to write the scale curve (SVG); default bench/results.")
    Path out;

    private final List<Result> results = new ArrayList<>();
    /** What tools that must show how they ran reported after each case (the served one-shot: its serve's request count). */
    private final List<Map<String, Object>> checks = new ArrayList<>();
    /** The serve's memory, idle and holding many mappings. */
    private Map<String, Object> footprint;
    private Map<String, Object> bulk;
    private Map<String, Object> freshServe;
    private Map<String, Object> udpPublish;
    /** run_timed, which runs the command-line tools inside their namespaces (InNamespace). */
    private Path timer;
    private int steps;
    private int step;
    /** When the run started: each step says how far in it is, against the quick run's two-minute budget. */
    private final long started = System.nanoTime();

    record Result(String caseName, String tool, int existing, List<Long> samples) {
        long median() {
            return Stats.median(samples);
        }
    }

    /** Every count given is one that can run, before anything is made: a usage error naming the option and its value. */
    private void checkCounts() {
        atLeast("--cycles", cycles, 1);
        atLeast("--clients", clients, 1);
        atLeast("--mappings", bulkMappings, 1);
        atLeast("--rounds", bulkRounds, 1);
        // The 100th publish of a fresh serve is one of its figures, the 91st to 110th around it another.
        atLeast("--requests", freshRequests, 110);
        atLeast("--serves", freshServes, 1);
        atLeast("--conntrack-entries", conntrackEntries, 1);
    }

    private void atLeast(String option, int value, int least) {
        if (value < least) {
            throw new ParameterException(spec.commandLine(), option + " must be at least " + least + ", not " + value);
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Harness()).execute(args));
    }

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        checkCounts();
        Path root = Path.of(System.getenv().getOrDefault("GATUN_HOME", ".")).toAbsolutePath();
        if (soak) {
            return soak(root);
        }
        Path cRef = CBuild.build(root);
        timer = CBuild.timer(root);
        if (bulkOnly) {
            return bulkOnly(cRef);
        }
        if (freshServeOnly) {
            return alone("a serve just started, its forwarded publishes against its warm figure:",
                    FreshServe.measure(root.resolve("gatun"), CBuild.serveTimer(root), freshRequests, freshServes));
        }
        if (udpPublishOnly) {
            return alone("a UDP and a TCP publish beside " + conntrackEntries + " unrelated conntrack entries, against none:",
                    UdpPublish.measure(conntrackEntries, bulkRounds * 20));
        }
        if (footprintOnly) {
            return alone("gatun serve's memory, idle and with " + bulkMappings + " mappings, and its repair:",
                    Footprint.measure(root.resolve("gatun"), timer, bulkMappings, false));
        }
        if (out == null) {
            out = root.resolve("bench/results");
        }
        List<Integer> existing = quick ? List.of(0, 1000) : List.of(0, 1000, 10_000, 100_000);
        // Each sample follows a tool drawn at random, from the C program's microseconds to a new
        // JVM's quarter second, and that sets how cold it runs: enough samples that the median
        // is not the luck of a few draws.
        int samples = quick ? 7 : 31;
        int contention = quick ? 10 : 100;
        int threadsOps = quick ? 100 : 200;
        int footprintMappings = quick ? 10_000 : 100_000;
        steps = existing.size() + 10;
        try {
            for (int n : existing) {
                progress("one publish with " + n + " mappings present");
                List<Supplier<Subjects.Subject>> tools = new ArrayList<>(subjects(root, cRef));
                tools.add(Subjects.InProcess::javaFloor);
                tools.add(() -> Subjects.GatunServed.clientOnly(root, timer, serveWarmUpMs(), serveIdleMs()));
                // A bare process start among them, so that the process tools' ratios to it compare
                // samples taken as cold as theirs (the controls' own step runs only controls).
                tools.add(() -> new Subjects.Control(timer, Subjects.Control.Kind.BARE));
                compare("publish", n, samples, 1, List.of(1), tools);
            }
            progress("the controls: a process that does nothing, bare, in nsenter, and as the method before ran each call");
            compare("control-process", 0, samples, 1, List.of(1), List.of(
                    () -> new Subjects.Control(timer, Subjects.Control.Kind.BARE),
                    () -> new Subjects.Control(timer, Subjects.Control.Kind.NSENTER),
                    () -> new Subjects.Control(timer, Subjects.Control.Kind.OLD_METHOD)));
            progress("one publish after another, in blocks");
            // With the limit (a publish's commit alone, in C) and gatun planning from memory, as serve runs it.
            compare("publish-back-to-back", 0, quick ? 3 : 15, BLOCK, List.of(1),
                    List.of(Subjects.InProcess::gatun, () -> new Subjects.CReference(cRef), Subjects.InProcess::javaFloor,
                            () -> new Subjects.DockerIptables("iptables-nft", timer), Subjects.InProcess::gatunFollowed,
                            () -> Subjects.CReference.commitOnly(cRef), () -> Subjects.CReference.commitHeard(cRef)));
            int top = existing.getLast();
            progress("one publish after another, in blocks, with " + top + " mappings present");
            // Without iptables here: with 100,000 rules a Docker-style publish takes tens of seconds.
            compare("publish-back-to-back", top, quick ? 3 : 15, BLOCK, List.of(1),
                    List.of(Subjects.InProcess::gatun, () -> new Subjects.CReference(cRef), Subjects.InProcess::javaFloor,
                            Subjects.InProcess::gatunFollowed, () -> Subjects.CReference.commitOnly(cRef),
                            () -> Subjects.CReference.commitHeard(cRef)));
            progress("publishing " + contention + " mappings while another process holds the xtables lock");
            contention(root, cRef, contention);
            progress("publishing a 32-port container");
            List<Integer> ports32 = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                ports32.add(61000 + i);
            }
            // The served tool first: its serve starts while the others are set up.
            compare("publish-32-ports", 0, quick ? 3 : 10, 1, ports32, List.of(
                    () -> new Subjects.GatunServed(root, timer, 32, serveWarmUpMs(), serveIdleMs()),
                    () -> new Subjects.GatunCli(root, timer), () -> new Subjects.DockerIptables("iptables-nft", timer),
                    () -> new Subjects.InProcess("gatun", 32)));
            progress("a bulk publish of " + footprintMappings + " mappings in one call, and the C floor's one batch of them");
            bulk = Bulk.batch(cRef, timer, footprintMappings, quick ? 2 : 5);
            progress("gatun serve's memory, idle and with " + footprintMappings + " mappings published through it, and"
                    + " its repair of them after nft flush ruleset");
            footprint = Footprint.measure(root.resolve("gatun"), timer, footprintMappings, quick);
            progress("a serve just started: its 1st, 10th and 100th forwarded publish against its warm figure");
            freshServe = FreshServe.measure(root.resolve("gatun"), CBuild.serveTimer(root), quick ? 300 : freshRequests,
                    quick ? 1 : freshServes);
            progress("16 threads publishing single mappings");
            groupCommit(threadsOps, quick ? 3 : 9);
            int entries = quick ? Math.min(conntrackEntries, 10_000) : conntrackEntries;
            progress("a UDP and a TCP publish beside " + entries + " unrelated conntrack entries, against none");
            udpPublish = UdpPublish.measure(entries, quick ? 10 : 100);
        } finally {
            System.err.println();
            System.err.println("measured in " + (System.nanoTime() - started) / 1_000_000_000L + " s");
        }
        Map<String, Object> ratios = ratios(existing);
        Map<String, Object> controls = controls();
        Map<String, String> method = Method.describe(contention, serveWarmUpMs());
        Files.createDirectories(out);
        Path svg = out.resolve("scale.svg");
        Files.writeString(svg, Svg.scaleCurve(results.stream().filter(r -> r.caseName.equals("publish")).toList()));
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            List<Map<String, Object>> rows = new ArrayList<>();
            for (Result r : results) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("case", r.caseName);
                m.put("tool", r.tool);
                m.put("existing", r.existing);
                m.put("median_us", r.median());
                m.put("min_us", Stats.min(r.samples));
                m.put("max_us", Stats.max(r.samples));
                m.put("samples", r.samples.size());
                rows.add(m);
            }
            doc.put("results", rows);
            doc.put("ratios", ratios);
            doc.put("controls", controls);
            doc.put("served_checks", checks);
            doc.put("serve_footprint", footprint);
            doc.put("bulk_publish", bulk);
            doc.put("fresh_serve", freshServe);
            doc.put("udp_publish", udpPublish);
            doc.put("method", method);
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc));
        } else {
            Report.table(results, ratios, controls, checks, footprint, bulk, freshServe, method, svg);
            Report.section("a UDP and a TCP publish beside unrelated conntrack entries, against none:", udpPublish);
        }
        return 0;
    }

    /** The soak alone: its report, exit 0 when every figure ended within 10% of its baseline and nothing was left. */
    private int soak(Path root) throws Exception {
        System.err.println("soak: " + cycles + " cycles from " + clients + " clients through gatun serve");
        Map<String, Object> m = Soak.run(root.resolve("gatun"), CBuild.timer(root), cycles, clients);
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(m));
        } else {
            System.out.print(Soak.text(m));
        }
        return Boolean.TRUE.equals(m.get("all_within_10_percent")) && ((List<?>) m.get("left_behind")).isEmpty() ? 0 : 1;
    }

    /** The bulk publish alone: its figures, exit 0 when it met its target. */
    /** Prints the figures of a step run alone, as JSON with --json. */
    private int alone(String title, Map<String, Object> m) throws Exception {
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(m));
        } else {
            Report.section(title, m);
        }
        return 0;
    }

    private int bulkOnly(Path cRef) throws Exception {
        System.err.println("bulk publish: " + bulkMappings + " mappings in one call against the C floor's one batch, "
                + bulkRounds + " rounds");
        Map<String, Object> m = Bulk.batch(cRef, timer, bulkMappings, bulkRounds);
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(m));
        } else {
            Report.section("a bulk publish in one call, against the C floor's one batch:", m);
        }
        return Boolean.TRUE.equals(m.get("met")) ? 0 : 1;
    }

    private List<Supplier<Subjects.Subject>> subjects(Path root, Path cRef) {
        return List.of(Subjects.InProcess::gatun, () -> new Subjects.GatunCli(root, timer),
                () -> new Subjects.GatunServed(root, timer, 1, serveWarmUpMs(), serveIdleMs()), () -> new Subjects.CReference(cRef),
                () -> new Subjects.NftBinary(timer), () -> new Subjects.DockerIptables("iptables-nft", timer),
                () -> new Subjects.DockerIptables("iptables-legacy", timer), () -> new Subjects.DockerNftShape(timer));
    }

    /**
     * How long the served tool's serve may be warmed up before a case (Serve.warmUp), as long as
     * a worker's warm-up may take. The quick run (a smoke run, under two minutes) gives it half a
     * second, a few dozen requests: its served figures are those of a serve that has barely started.
     */
    private long serveWarmUpMs() {
        return quick ? 500 : 20_000;
    }

    /** How long to wait at most for the serve's JIT to be idle: as long as for the workers', less in the quick run. */
    private long serveIdleMs() {
        return quick ? 1_000 : 10_000;
    }

    /**
     * Publishes in a row per tool in the back-to-back case: what runs before each sample but the
     * block's first is the tool itself, as in an engine publishing a burst of containers. The
     * interleaved cases show the other side: one publish after another tool ran, caches cold.
     */
    private static final int BLOCK = 10;

    /**
     * Every tool publishes the same ports, in turn: per round each tool publishes once, or with
     * {@code block} > 1 that many single ports in a row, all but the first of them samples.
     */
    private void compare(String caseName, int existing, int wantedRounds, int block, List<Integer> ports,
                         List<Supplier<Subjects.Subject>> makers) {
        int rounds = RoundOrders.rounds(wantedRounds, makers.size());
        List<int[]> orders = RoundOrders.cycle(makers.size());
        List<Subjects.Subject> subjects = new ArrayList<>();
        try {
            for (Supplier<Subjects.Subject> make : makers) {
                Subjects.Subject s = make.get();
                subjects.add(s);
                s.populate(existing);
            }
            // Warm up once every tool is set up, so that the samples follow the warm-up straight on.
            subjects.forEach(Subjects.Subject::warmUp);
            Map<Subjects.Subject, List<Long>> times = new LinkedHashMap<>();
            subjects.forEach(s -> times.put(s, new ArrayList<>()));
            // One unmeasured round first, for every tool at every size, also those that get
            // fewer samples: class loading, first sockets, page cache. Then whole cycles of
            // balanced orders (RoundOrders): what ran just before a sample sets how cold the
            // caches are, so each tool follows each other one equally often.
            for (int i = -1; i < rounds; i++) {
                for (int t : orders.get(Math.max(i, 0) % orders.size())) {
                    Subjects.Subject s = subjects.get(t);
                    if (i >= samplesFor(s, existing, rounds)) {
                        continue;
                    }
                    List<Long> taken;
                    if (block == 1) {
                        int base = 52000 + (i + 1) * ports.size();
                        taken = List.of(s.publish(ports.size() == 1 ? List.of(base)
                                : ports.stream().map(p -> p - 61000 + base).toList()));
                    } else {
                        int first = 52000 + (i + 1) * block;
                        taken = s.publishInARow(IntStream.range(first, first + block).boxed().toList())
                                .subList(1, block);
                    }
                    if (i >= 0) {
                        times.get(s).addAll(taken);
                    }
                }
                if (i < 0) {
                    // The unmeasured round ran this JVM's code for every tool (starting processes,
                    // reading their output) and the workers' request code for the first time: let
                    // their JITs finish compiling it, or their threads compete with the first
                    // samples for the two cores.
                    Worker.awaitIdleJit();
                    subjects.forEach(Subjects.Subject::settle);
                }
            }
            for (Subjects.Subject s : subjects) {
                check(caseName, existing, s);
            }
            times.forEach((s, t) -> results.add(new Result(caseName, s.tool, existing, t)));
        } finally {
            subjects.forEach(Subjects.Subject::close);
        }
    }

    /** Keeps what a tool reports about how it ran (Subject.finish), which fails the run if it did not run as reported. */
    private void check(String caseName, int existing, Subjects.Subject s) {
        Map<String, Object> reported = s.finish();
        if (reported != null) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("case", caseName);
            m.put("existing", existing);
            m.put("tool", s.tool);
            m.putAll(reported);
            checks.add(m);
        }
    }

    /**
     * Docker-style iptables runs six processes per port, and with 100,000 rules present each
     * iptables-nft call takes seconds: those get two samples there, not the full count, after
     * the same unmeasured round as every other tool (it once skipped theirs at those sizes).
     */
    private static int samplesFor(Subjects.Subject s, int existing, int samples) {
        return s instanceof Subjects.DockerIptables && existing >= 10_000 ? Math.min(samples, 2) : samples;
    }

    /**
     * Each tool makes {@code count} separate publishes of one port, in a row, while
     * /run/xtables.lock is held for three seconds (or until the row is done, if that is sooner:
     * nothing is measured after it): the same work for every tool, none batched.
     * Before the lock is taken each gets one unmeasured publish, as the unmeasured round of the
     * other cases. The result is the sum of the publishes as each tool times them: the wall time
     * of the row would also hold the pipe and a worker's request code running for the first time
     * (milliseconds, interpreted), which are not the tool's.
     */
    private void contention(Path root, Path cRef, int count) throws Exception {
        List<Integer> ports = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ports.add(60000 + i);
        }
        for (Supplier<Subjects.Subject> make : subjects(root, cRef)) {
            try (Subjects.Subject s = make.get()) {
                s.warmUp();
                s.publish(List.of(59999));
                Process holder = XtablesLock.hold(3);
                long us = s.publishInARow(ports).stream().mapToLong(Long::longValue).sum();
                // Held through every publish of the row (or for the three seconds): no need to wait out the rest.
                XtablesLock.release(holder);
                check("contention", 0, s);
                results.add(new Result("contention", s.tool, 0, List.of(us)));
            }
        }
    }

    /**
     * The same 16 threads with one driver (group commit) and with a driver each (a transaction
     * each): one unmeasured round of each first (the JIT), then rounds in turn; each round
     * publishes new ports and a sample is the wall time per publish.
     */
    private void groupCommit(int opsPerThread, int rounds) throws Exception {
        String name = "gatun-bench-" + ProcessHandle.current().pid() + "-threads";
        var ns = NamedNamespaces.create(name);
        List<NetworkDriver> own = new ArrayList<>();
        try (NetworkDriver shared = Gatun.open(ns, "nftables")) {
            shared.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            for (int t = 0; t < 16; t++) {
                own.add(Gatun.open(ns, "nftables"));
            }
            InetAddress groupIp = InetAddress.ofLiteral("10.88.0.2");
            InetAddress eachIp = InetAddress.ofLiteral("10.88.0.3");
            List<Long> grouped = new ArrayList<>();
            List<Long> each = new ArrayList<>();
            for (int round = -1; round < rounds; round++) {
                // New ports in every round: from 1024 for the group, from 33024 for the others
                // (10 rounds of 16 x 200 fit in each half).
                int base = (round + 1) * 16 * opsPerThread;
                long g = Threads.run(16, opsPerThread, (t, i) -> shared.publish(new PortRequest("n1", groupIp,
                        List.of(PortSpec.parse((1024 + base + t * opsPerThread + i) + ":80")), null)));
                long e = Threads.run(16, opsPerThread, (t, i) -> own.get(t).publish(new PortRequest("n1", eachIp,
                        List.of(PortSpec.parse((33024 + base + t * opsPerThread + i) + ":80")), null)));
                if (round >= 0) {
                    grouped.add(g / (16L * opsPerThread));
                    each.add(e / (16L * opsPerThread));
                }
            }
            results.add(new Result("16-threads-group-commit", "gatun", 0, grouped));
            results.add(new Result("16-threads-transaction-each", "gatun", 0, each));
        } finally {
            own.forEach(NetworkDriver::close);
            NamedNamespaces.delete(name);
        }
    }

    private Map<String, Object> ratios(List<Integer> existing) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("gatun_over_c", ratio(find("publish", "gatun", 0), find("publish", "c", 0)));
        r.put("gatun_over_c_back_to_back", ratio(find("publish-back-to-back", "gatun", 0),
                find("publish-back-to-back", "c", 0)));
        // gatun over C, split: the JVM and the FFM passage (the C program's calls in Java), then gatun's own code.
        r.put("java_floor_over_c", ratio(find("publish", "java-floor", 0), find("publish", "c", 0)));
        r.put("gatun_over_java_floor", ratio(find("publish", "gatun", 0), find("publish", "java-floor", 0)));
        r.put("java_floor_over_c_back_to_back", ratio(find("publish-back-to-back", "java-floor", 0),
                find("publish-back-to-back", "c", 0)));
        r.put("gatun_over_java_floor_back_to_back", ratio(find("publish-back-to-back", "gatun", 0),
                find("publish-back-to-back", "java-floor", 0)));
        // Issue 34's limit: a publish's commit alone. gatun planning from memory (serve, the engines) and the CLI's path.
        r.put("followed_over_commit_limit_back_to_back", ratio(find("publish-back-to-back", "gatun-followed", 0),
                find("publish-back-to-back", "c-commit", 0)));
        r.put("gatun_over_commit_limit_back_to_back", ratio(find("publish-back-to-back", "gatun", 0),
                find("publish-back-to-back", "c-commit", 0)));
        // A follower is a listener, and the kernel makes every commit notify it: the same commit heard, in C.
        r.put("followed_over_heard_commit_back_to_back", ratio(find("publish-back-to-back", "gatun-followed", 0),
                find("publish-back-to-back", "c-commit-heard", 0)));
        r.put("heard_commit_over_commit_limit_back_to_back", ratio(find("publish-back-to-back", "c-commit-heard", 0),
                find("publish-back-to-back", "c-commit", 0)));
        r.put("iptables_nft_over_gatun", ratio(find("publish", "iptables-nft", 0), find("publish", "gatun", 0)));
        r.put("iptables_nft_over_gatun_back_to_back", ratio(find("publish-back-to-back", "iptables-nft", 0),
                find("publish-back-to-back", "gatun", 0)));
        int top = existing.getLast();
        r.put("scale_100k_over_0", top == 100_000 ? ratio(find("publish", "gatun", top), find("publish", "gatun", 0)) : null);
        if (top != 100_000) {
            r.put("scale_" + top + "_over_0", ratio(find("publish", "gatun", top), find("publish", "gatun", 0)));
        }
        r.put("scale_" + (top == 100_000 ? "100k" : top) + "_over_0_back_to_back",
                ratio(find("publish-back-to-back", "gatun", top), find("publish-back-to-back", "gatun", 0)));
        r.put("group_commit_speedup", ratio(find("16-threads-transaction-each", "gatun", 0),
                find("16-threads-group-commit", "gatun", 0)));
        r.put("cli_32port_iptables_nft_over_gatun", ratio(find("publish-32-ports", "iptables-nft", 0),
                find("publish-32-ports", "gatun-cli", 0)));
        // The one-shot command with a serve running (the C client, no JVM) against Docker-style
        // iptables-nft, and the JVM path (no serve) over it.
        r.put("iptables_nft_over_served", ratio(find("publish", "iptables-nft", 0), find("publish", "gatun-served", 0)));
        r.put("served_32port_iptables_nft_over_served", ratio(find("publish-32-ports", "iptables-nft", 0),
                find("publish-32-ports", "gatun-served", 0)));
        r.put("cli_over_served", ratio(find("publish", "gatun-cli", 0), find("publish", "gatun-served", 0)));
        // Issue 33's targets for the installed command (the C client, a serve running): against a
        // bare process start sampled in the same step (at most 1.6x), and one nft process per change (2x).
        Map<Integer, Double> clientOverStart = new LinkedHashMap<>();
        for (int n : existing) {
            clientOverStart.put(n, ratio(find("publish", "gatun-client", n), find("publish", "true", n)));
        }
        r.put("client_over_process_start", clientOverStart.get(0));
        r.put("client_over_process_start_by_existing", clientOverStart);
        r.put("nft_over_client", ratio(find("publish", "nft", 0), find("publish", "gatun-client", 0)));
        r.put("cli_32port_over_served", ratio(find("publish-32-ports", "gatun-cli", 0),
                find("publish-32-ports", "gatun-served", 0)));
        return r;
    }

    /**
     * What a process that does nothing costs spawned as the command-line tools are, and what
     * nsenter per call, and the method before (nsenter started from this JVM), added to each call.
     */
    private Map<String, Object> controls() {
        Map<String, Object> c = new LinkedHashMap<>();
        Long bare = find("control-process", "true", 0);
        Long wrapped = find("control-process", "nsenter-true", 0);
        Long old = find("control-process", "jvm-nsenter-true", 0);
        c.put("process_us", bare);
        c.put("process_in_publish_step_us", find("publish", "true", 0));
        c.put("nsenter_process_us", wrapped);
        c.put("old_method_process_us", old);
        c.put("nsenter_adds_us_per_call", bare == null || wrapped == null ? null : wrapped - bare);
        c.put("old_method_added_us_per_call", bare == null || old == null ? null : old - bare);
        // The served one-shot command split: the launcher (sh) before the C client, and the client with the serve.
        Long served = find("publish", "gatun-served", 0);
        Long client = find("publish", "gatun-client", 0);
        c.put("served_client_only_us", client);
        c.put("served_launcher_adds_us_per_call", served == null || client == null ? null : served - client);
        return c;
    }

    private Long find(String caseName, String tool, int existing) {
        return results.stream().filter(x -> x.caseName.equals(caseName) && x.tool.equals(tool) && x.existing == existing)
                .map(Result::median).findFirst().orElse(null);
    }

    private static Double ratio(Long a, Long b) {
        return a == null || b == null || b == 0 ? null : Math.round(1000.0 * a / b) / 1000.0;
    }

    private void progress(String what) {
        step++;
        long seconds = (System.nanoTime() - started) / 1_000_000_000L;
        System.err.print("\r\033[K[" + step + "/" + steps + ", " + seconds + " s] " + what);
        System.err.flush();
    }
}
