package dev.gatun.bench;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The tools compared, each doing the same work (publish tcp HOST_PORT to 10.88.0.2 on every
 * host address) in a namespace of its own, the way its users run it.
 */
final class Subjects {

    static final String CONTAINER = "10.88.0.2";
    static final String BRIDGE = "gatun-n1";
    private static final AtomicInteger NAMESPACES = new AtomicInteger();

    private Subjects() {}

    /** One tool in one namespace. */
    abstract static class Subject implements AutoCloseable {
        final String tool;
        final NetworkNamespace ns;
        /** For a tool run as processes: run_timed inside {@link #ns}, started once; null for the others. */
        private InNamespace inside;

        Subject(String tool) {
            this.tool = tool;
            this.ns = NamedNamespaces.create("gatun-bench-" + ProcessHandle.current().pid() + "-"
                    + NAMESPACES.incrementAndGet());
        }

        /**
         * Runs a subclass's set-up; if it fails, removes the namespace before passing the failure
         * on. Not through close(): a subclass's override would meet its own fields unset.
         */
        final void setUp(Runnable steps) {
            try {
                steps.run();
            } catch (RuntimeException e) {
                release();
                throw e;
            }
        }

        /** Starts the process that runs this tool's commands inside the namespace (see InNamespace). */
        final void runInside(Path timer) {
            inside = new InNamespace(timer, ns.path());
        }

        final InNamespace inside() {
            return inside;
        }

        /** Makes {@code existing} mappings (tcp and udp ports from 1) before measuring. */
        abstract void populate(int existing);

        /** Brings the tool to its steady state before it is measured (a JIT for gatun in-process). */
        void warmUp() {
        }

        /** After the unmeasured first round: waits until the tool has finished its own start-up work (a JIT). */
        void settle() {
        }

        /** Publishes host ports {@code ports} (each to the same container port); returns microseconds. */
        abstract long publish(List<Integer> ports);

        /**
         * After the case's samples, before they are kept: a tool that must show how it ran checks
         * it here (and throws, failing the run, when it did not run as reported); returns what to
         * report beside its samples, or null.
         */
        Map<String, Object> finish() {
            return null;
        }

        /** Publishes the ports one by one, in a row; returns each one's microseconds. */
        List<Long> publishInARow(List<Integer> ports) {
            List<Long> out = new ArrayList<>();
            for (int p : ports) {
                out.add(publish(List.of(p)));
            }
            return out;
        }

        @Override
        public void close() {
            release();
        }

        private void release() {
            if (inside != null) {
                inside.close();
            }
            NamedNamespaces.delete(ns.name());
        }
    }

    /** Ports 1..n/2 of tcp and udp: the mappings present before measuring. */
    static List<String> existingSpecs(int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add((i / 2 + 1) + ":" + (i / 2 + 1) + (i % 2 == 0 ? "/tcp" : "/udp"));
        }
        return out;
    }

    /** Another subject that shares gatun's table layout, populated through gatun. */
    abstract static class OnGatunTable extends Subject {
        OnGatunTable(String tool) {
            super(tool);
            setUp(() -> createNetwork(ns));
        }

        /** gatun's table and network n1 (bridge gatun-n1, 10.88.0.0/16): what every publish here goes to. */
        static void createNetwork(NetworkNamespace ns) {
            try (NetworkDriver d = Gatun.open(ns, "nftables")) {
                d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            }
        }

        @Override
        void populate(int existing) {
            if (existing > 0) {
                try (NetworkDriver d = Gatun.open(ns, "nftables")) {
                    d.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88.0.9"),
                            existingSpecs(existing).stream().map(PortSpec::parse).toList(), "bench"));
                }
            }
        }
    }

    /**
     * The one-shot command, a new JVM per publish, as a script on the host runs it: started by a
     * process already inside the namespace, like the other command-line tools, so it needs no --netns.
     */
    static class GatunCli extends OnGatunTable {
        /** The gatun command (./gatun). */
        final Path launcher;
        /** What each publish runs: the launcher, or for a control the C client it runs first. */
        private final Path program;
        /** How many times this tool ran the command. */
        int calls;

        GatunCli(Path root, Path timer) {
            this("gatun-cli", root, timer, root.resolve("gatun"));
        }

        GatunCli(String tool, Path root, Path timer, Path program) {
            super(tool);
            launcher = root.resolve("gatun");
            this.program = program;
            setUp(() -> runInside(timer));
        }

        @Override
        long publish(List<Integer> ports) {
            List<String> cmd = new ArrayList<>(List.of(program.toString(), "publish", "n1", CONTAINER));
            for (int p : ports) {
                cmd.add("-p");
                cmd.add(p + ":" + p);
            }
            calls++;
            return inside().time(cmd, null);
        }
    }

    /**
     * The same one-shot command, run the same way, with a {@code gatun serve} running for the
     * namespace: the launcher's C client sends it to the serve and no JVM starts. The serve starts
     * (through the launcher, {@code --netns NS serve}) after the mappings are in place, as on a
     * host where it runs with them, is warmed up as a long-running serve is warm (see warmUp), and
     * stops with SIGTERM after the case. Every command must be among those it says it ran when it
     * stops: one that fell back to a JVM fails the run instead of being reported as served.
     */
    static final class GatunServed extends GatunCli {
        /** The C client that the launcher runs first, built by the launcher. */
        static Path client(Path root) {
            return root.resolve("cli/target/gatun-client");
        }

        /** Ports for the serve's warm-up: none of the cases publishes there. */
        private static final int WARM_UP_PORT = 62000;
        private final int width;
        private final long warmUpLimitMs;
        private Serve serve;
        private final long idleLimitMs;
        private int warmUpRequests;
        /** How long each wait before the samples took (the quick run's budget is tight). */
        private final Map<String, Object> waits = new LinkedHashMap<>();

        /**
         * {@code width}: how many ports each publish of the case takes, so that the warm-up sends
         * the same command line; {@code warmUpLimitMs}: at most this long warming the serve up;
         * {@code idleLimitMs}: at most this long waiting for its JIT to be idle, after the warm-up
         * and after the unmeasured round.
         */
        GatunServed(Path root, Path timer, int width, long warmUpLimitMs, long idleLimitMs) {
            this("gatun-served", root, timer, root.resolve("gatun"), width, warmUpLimitMs, idleLimitMs);
        }

        /**
         * The control: the C client alone ({@code cli/target/gatun-client publish ...}, what the
         * launcher execs first) with a serve running, so the served tool splits into the launcher's
         * sh and what the client and the serve cost.
         */
        static GatunServed clientOnly(Path root, Path timer, long warmUpLimitMs, long idleLimitMs) {
            return new GatunServed("gatun-client", root, timer, client(root), 1, warmUpLimitMs, idleLimitMs);
        }

        private GatunServed(String tool, Path root, Path timer, Path program, int width, long warmUpLimitMs,
                            long idleLimitMs) {
            super(tool, root, timer, program);
            this.width = width;
            this.warmUpLimitMs = warmUpLimitMs;
            this.idleLimitMs = idleLimitMs;
        }

        /** The mappings first, then the serve, which reads them at start: it starts while the other tools are set up. */
        @Override
        void populate(int existing) {
            super.populate(existing);
            serve = Serve.launch(launcher, ns);
        }

        /**
         * Brings the serve to a long-running serve's steady state, as the in-process tools are
         * brought to theirs: the samples' command line on other ports, undone again, sent until its
         * JIT is idle. The launcher and the client are new processes in every sample, as every other
         * command-line tool's, warmed by the unmeasured round as theirs are.
         */
        @Override
        void warmUp() {
            if (serve == null) {
                serve = Serve.launch(launcher, ns);
            }
            long t = System.nanoTime();
            serve.awaitReady();
            long ready = System.nanoTime();
            warmUpRequests = serve.warmUp(command("publish"), command("unpublish"), warmUpLimitMs);
            long warm = System.nanoTime();
            serve.awaitIdleJit(idleLimitMs);
            waits.put("ready_wait_ms", (ready - t) / 1_000_000);
            waits.put("warm_up_ms", (warm - ready) / 1_000_000);
            waits.put("jit_idle_wait_ms", (System.nanoTime() - warm) / 1_000_000);
        }

        /** The samples' command line, on the warm-up's ports. */
        private List<String> command(String verb) {
            List<String> cmd = new ArrayList<>(List.of(verb, "n1", CONTAINER));
            for (int i = 0; i < width; i++) {
                cmd.add("-p");
                cmd.add((WARM_UP_PORT + i) + ":" + (WARM_UP_PORT + i));
            }
            return cmd;
        }

        @Override
        void settle() {
            long t = System.nanoTime();
            serve.awaitIdleJit(idleLimitMs);
            waits.put("settle_wait_ms", (System.nanoTime() - t) / 1_000_000);
        }

        @Override
        Map<String, Object> finish() {
            int ran = serve.stop();
            int expected = calls + serve.sent();
            if (ran != expected) {
                throw new IllegalStateException("gatun serve ran " + ran + " commands, not the " + calls + " one-shot commands of "
                        + tool + " and the " + serve.sent() + " of its warm-up: " + (expected - ran)
                        + " fell back to a JVM, so they were not served");
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("commands", calls);
            m.put("warm_up_requests", warmUpRequests);
            m.putAll(waits);
            m.put("ran_by_serve", ran);
            m.put("serve_exit", 0);
            // What else it logged (a repair would show here), but for its last line.
            m.put("serve_log", serve.log().stream().filter(l -> !l.contains("gatun serve: stopping")).limit(10).toList());
            return m;
        }

        @Override
        public void close() {
            if (serve != null) {
                serve.close();
            }
            super.close();
        }
    }

    /**
     * A tool kept running in a process of its own and driven over a pipe: a request "FIRST
     * COUNT" makes it publish COUNT times in a row, the ports from FIRST on, and it answers one
     * line of microseconds per publish, timed inside it.
     */
    abstract static class Piped extends OnGatunTable {
        private final Process process;
        private final BufferedReader answers;
        private final PrintWriter requests;

        /** {@code command}: given the namespace's name, the command that starts the tool. */
        Piped(String tool, Function<String, List<String>> command) {
            super(tool);
            List<String> cmd = command.apply(ns.name());
            try {
                process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start " + cmd.getFirst() + ": " + e.getMessage(), e);
            }
            answers = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            requests = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        /** Sends one line; returns the next {@code lines} lines of the answer. */
        List<String> ask(String request, int lines) {
            requests.println(request);
            List<String> out = new ArrayList<>();
            try {
                for (int i = 0; i < lines; i++) {
                    String line = answers.readLine();
                    if (line == null) {
                        throw new IllegalStateException(tool + " stopped (its errors are above)");
                    }
                    out.add(line.strip());
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return out;
        }

        /** {@code count} publishes in a row from port {@code first} on; each one's microseconds. */
        List<Long> publishFrom(int first, int count) {
            return ask(request(first, count), count).stream().map(Long::parseLong).toList();
        }

        /** The request line for {@code count} publishes from port {@code first} on. */
        String request(int first, int count) {
            return first + " " + count;
        }

        /** Consecutive ports in one request: published in a row, rather than sleeping on the pipe between them. */
        @Override
        List<Long> publishInARow(List<Integer> ports) {
            requireConsecutive(ports);
            return publishFrom(ports.getFirst(), ports.size());
        }

        void requireConsecutive(List<Integer> ports) {
            for (int i = 1; i < ports.size(); i++) {
                if (ports.get(i) != ports.getFirst() + i) {
                    throw new IllegalArgumentException(tool + " publishes consecutive ports: " + ports);
                }
            }
        }

        @Override
        public void close() {
            requests.close();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.destroy();
            super.close();
        }
    }

    /** The C program that sends exactly gatun's messages: the floor, one port per publish. */
    static final class CReference extends Piped {
        /** What each request line starts with: "" for whole publishes, "commit " for their commits alone. */
        private final String verb;

        CReference(Path binary) {
            this("c", binary, "");
        }

        /**
         * The limit: a publish's commit alone (one round trip, guarded by the generation the
         * program made last), what a driver that plans from memory sends.
         */
        static CReference commitOnly(Path binary) {
            return new CReference("c-commit", binary, "commit ");
        }

        /**
         * The limit of a driver that follows the ruleset: the same commit while a thread of the
         * program listens to the namespace's nftables notifications and decodes them. With a
         * listener the kernel builds and sends a notification of each change inside the commit.
         */
        static CReference commitHeard(Path binary) {
            return new CReference("c-commit-heard", binary, "heard ");
        }

        private CReference(String tool, Path binary, String verb) {
            super(tool, ns -> List.of("ip", "netns", "exec", ns, binary.toString(), "1", CONTAINER, "1", "bench", "0"));
            this.verb = verb;
        }

        @Override
        long publish(List<Integer> ports) {
            long total = 0;
            for (int p : ports) {
                total += publishFrom(p, 1).getFirst();
            }
            return total;
        }

        @Override
        String request(int first, int count) {
            return verb + super.request(first, count);
        }
    }

    /**
     * gatun's nftables driver or the Java floor, in a JVM of their own per case (Worker), warm:
     * a long-running engine publishes all day, so they are measured compiled, as the C floor is.
     */
    static final class InProcess extends Piped {
        private final int width;

        /** {@code width}: how many ports each publish takes, so that the warm-up calls publish the same way. */
        InProcess(String tool, int width) {
            super(tool, ns -> workerCommand(tool, ns, width));
            this.width = width;
        }

        static InProcess gatun() {
            return new InProcess("gatun", 1);
        }

        static InProcess javaFloor() {
            return new InProcess("java-floor", 1);
        }

        /**
         * gatun as serve and the engine adapters run it: the self-healing driver, which plans from
         * memory, without the host-socket question (the engines own their ports).
         */
        static InProcess gatunFollowed() {
            return new InProcess("gatun-followed", 1);
        }

        /** This JVM's own java and flags, with the worker as main class. */
        private static List<String> workerCommand(String tool, String ns, int width) {
            List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElseThrow());
            cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Worker.class.getName(), tool, ns,
                    Integer.toString(width)));
            return cmd;
        }

        @Override
        void warmUp() {
            ask("warm", 1);
        }

        @Override
        void settle() {
            ask("settle", 1);
        }

        /** One publish of {@code width} consecutive ports. */
        @Override
        long publish(List<Integer> ports) {
            if (ports.size() != width) {
                throw new IllegalArgumentException(tool + " was warmed up for " + width + " ports per publish, not " + ports.size());
            }
            requireConsecutive(ports);
            return publishFrom(ports.getFirst(), 1).getFirst();
        }

        /** Single ports in a row: only for a worker warmed up to publish one port at a time. */
        @Override
        List<Long> publishInARow(List<Integer> ports) {
            if (width != 1) {
                throw new IllegalArgumentException(tool + " was warmed up for " + width + " ports per publish, not a row of single ports");
            }
            return super.publishInARow(ports);
        }
    }

    /** The nft binary, one process per change, run by a process already inside the namespace. */
    static final class NftBinary extends OnGatunTable {
        NftBinary(Path timer) {
            super("nft");
            setUp(() -> runInside(timer));
        }

        @Override
        long publish(List<Integer> ports) {
            StringBuilder elements = new StringBuilder();
            for (int p : ports) {
                elements.append(elements.isEmpty() ? "" : ", ").append("tcp . ").append(p)
                        .append(" comment \"bench\" : ").append(CONTAINER).append(" . ").append(p);
            }
            return inside().time(List.of("nft", "add", "element", "inet", "gatun", "ports4", "{ " + elements + " }"), null);
        }
    }

    /**
     * iptables as Docker runs it: for every port, a -C check and then -A for each of its DNAT,
     * ACCEPT and hairpin MASQUERADE rules, every call its own process with -w, started by a
     * process already inside the namespace as dockerd is.
     */
    static final class DockerIptables extends Subject {
        private final String iptables;

        DockerIptables(String variant, Path timer) {
            super(variant);
            this.iptables = variant;
            setUp(() -> {
                runInside(timer);
                inside().time(List.of(iptables, "-w", "-t", "nat", "-N", "DOCKER"), null);
                inside().time(List.of(iptables, "-w", "-t", "filter", "-N", "DOCKER"), null);
                inside().time(List.of("ip", "link", "add", BRIDGE, "type", "bridge"), null);
            });
        }

        @Override
        void populate(int existing) {
            if (existing == 0) {
                return;
            }
            StringBuilder nat = new StringBuilder("*nat\n");
            StringBuilder filter = new StringBuilder("*filter\n");
            for (String spec : existingSpecs(existing)) {
                String port = spec.substring(0, spec.indexOf(':'));
                String proto = spec.substring(spec.indexOf('/') + 1);
                nat.append("-A DOCKER -p ").append(proto).append(" -m ").append(proto).append(" --dport ").append(port)
                        .append(" ! -i ").append(BRIDGE).append(" -j DNAT --to-destination 10.88.0.9:").append(port).append('\n');
                nat.append("-A POSTROUTING -s 10.88.0.9/32 -d 10.88.0.9/32 -p ").append(proto).append(" -m ").append(proto)
                        .append(" --dport ").append(port).append(" -j MASQUERADE\n");
                filter.append("-A DOCKER -d 10.88.0.9/32 ! -i ").append(BRIDGE).append(" -o ").append(BRIDGE).append(" -p ")
                        .append(proto).append(" -m ").append(proto).append(" --dport ").append(port).append(" -j ACCEPT\n");
            }
            inside().time(List.of(iptables + "-restore", "-w", "--noflush"), nat + "COMMIT\n");
            inside().time(List.of(iptables + "-restore", "-w", "--noflush"), filter + "COMMIT\n");
        }

        @Override
        long publish(List<Integer> ports) {
            long total = 0;
            for (int p : ports) {
                String port = Integer.toString(p);
                List<List<String>> rules = List.of(
                        List.of("-t", "nat", "DOCKER", "-p", "tcp", "-d", "0/0", "--dport", port, "-j", "DNAT",
                                "--to-destination", CONTAINER + ":" + port, "!", "-i", BRIDGE),
                        List.of("-t", "filter", "DOCKER", "!", "-i", BRIDGE, "-o", BRIDGE, "-p", "tcp", "-d", CONTAINER,
                                "--dport", port, "-j", "ACCEPT"),
                        List.of("-t", "nat", "POSTROUTING", "-p", "tcp", "-s", CONTAINER, "-d", CONTAINER, "--dport", port,
                                "-j", "MASQUERADE"));
                for (List<String> rule : rules) {
                    total += call(rule, "-C", 1);
                    total += call(rule, "-A", 0);
                }
            }
            return total;
        }

        /** One iptables process; fails unless it exits 0 or {@code alsoFine} (-C: 1 when the rule is absent). */
        private long call(List<String> rule, String op, int alsoFine) {
            List<String> cmd = new ArrayList<>(List.of(iptables, "-w", rule.get(0), rule.get(1), op));
            cmd.addAll(rule.subList(2, rule.size()));
            InNamespace.Run r = inside().run(cmd, null);
            if (r.status() != 0 && r.status() != alsoFine) {
                throw new IllegalStateException(String.join(" ", cmd) + " exited " + r.status() + ": " + r.output().strip());
            }
            return r.micros();
        }
    }

    /** Docker 29's nftables backend shape: a rule per port in a shared chain, through nft -f, run inside the namespace. */
    static final class DockerNftShape extends Subject {
        DockerNftShape(Path timer) {
            super("docker-nft-shape");
            setUp(() -> {
                runInside(timer);
                inside().time(List.of("nft", "-f", "-"),
                        "table ip docker-bridges {\n chain dnat-gatun { type nat hook prerouting priority dstnat; }\n"
                                + " chain filter-forward { type filter hook forward priority filter; }\n}\n");
            });
        }

        @Override
        void populate(int existing) {
            if (existing == 0) {
                return;
            }
            StringBuilder s = new StringBuilder();
            for (String spec : existingSpecs(existing)) {
                String port = spec.substring(0, spec.indexOf(':'));
                String proto = spec.substring(spec.indexOf('/') + 1);
                s.append(rules(proto, port, "10.88.0.9"));
            }
            inside().time(List.of("nft", "-f", "-"), s.toString());
        }

        private static String rules(String proto, String port, String container) {
            return "add rule ip docker-bridges dnat-gatun " + proto + " dport " + port + " dnat to " + container + ":" + port
                    + "\nadd rule ip docker-bridges filter-forward ip daddr " + container + " " + proto + " dport " + port
                    + " accept\n";
        }

        @Override
        long publish(List<Integer> ports) {
            StringBuilder s = new StringBuilder();
            for (int p : ports) {
                s.append(rules("tcp", Integer.toString(p), CONTAINER));
            }
            return inside().time(List.of("nft", "-f", "-"), s.toString());
        }
    }

    /**
     * The controls for how the tools above are run, each running {@code true}, a process that
     * does nothing: spawned by run_timed, what any one-process call costs at least; the same
     * wrapped in {@code nsenter --net}, what entering the namespace per call adds; and the way
     * this bench ran every call before (nsenter started and timed from this JVM), what that
     * method added to each call of nft, iptables and the Docker nftables shape.
     */
    static final class Control extends Subject {
        enum Kind {
            BARE("true"), NSENTER("nsenter-true"), OLD_METHOD("jvm-nsenter-true");

            final String tool;

            Kind(String tool) {
                this.tool = tool;
            }
        }

        private final Kind kind;

        Control(Path timer, Kind kind) {
            super(kind.tool);
            this.kind = kind;
            setUp(() -> runInside(timer));
        }

        @Override
        void populate(int existing) {
        }

        @Override
        long publish(List<Integer> ports) {
            return switch (kind) {
                case BARE -> inside().time(List.of("true"), null);
                case NSENTER -> inside().time(List.of("nsenter", "--net=" + ns.path(), "true"), null);
                case OLD_METHOD -> fromThisJvm(List.of("nsenter", "--net=" + ns.path(), "true"));
            };
        }

        /** As the earlier method timed each call: the wall time of a process this JVM starts, output read, reaped. */
        private static long fromThisJvm(List<String> cmd) {
            try {
                long t = System.nanoTime();
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                p.getOutputStream().close();
                p.getInputStream().readAllBytes();
                if (!p.waitFor(60, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", cmd) + " did not exit within 60 s");
                }
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(String.join(" ", cmd) + " exited " + p.exitValue());
                }
                return (System.nanoTime() - t) / 1000;
            } catch (IOException e) {
                throw new IllegalStateException("cannot run " + cmd.getFirst() + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
