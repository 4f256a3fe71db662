package dev.gatun.bench;

import dev.gatun.Gatun;
import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tools compared, each doing the same work (publish tcp HOST_PORT to 10.88.0.2 on every
 * host address) in a namespace of its own, the way its users run it.
 */
final class Subjects {

    static final String CONTAINER = "10.88.0.2";
    static final String BRIDGE = "gatun-n1";
    private static final java.time.Duration WARM_UP_LIMIT = java.time.Duration.ofSeconds(20);
    private static final AtomicInteger NAMESPACES = new AtomicInteger();

    private Subjects() {}

    /** One tool in one namespace. */
    abstract static class Subject implements AutoCloseable {
        final String tool;
        final NetworkNamespace ns;

        Subject(String tool) {
            this.tool = tool;
            this.ns = NamedNamespaces.create("gatun-bench-" + ProcessHandle.current().pid() + "-"
                    + NAMESPACES.incrementAndGet());
        }

        /** Makes {@code existing} mappings (tcp and udp ports from 1) before measuring. */
        abstract void populate(int existing);

        /** Brings the tool to its steady state before it is measured (a JIT for gatun in-process). */
        void warmUp() {
        }

        /** Publishes host ports {@code ports} (each to the same container port); returns microseconds. */
        abstract long publish(List<Integer> ports);

        /**
         * Runs blocks of a thousand calls of {@code step} (given 0 to 999) until the JIT has
         * compiled nothing for five blocks in a row, at least twenty blocks and at most the
         * warm-up limit: what the in-process tools do before they are measured.
         */
        static void untilJitIdle(java.util.function.IntConsumer step) {
            var jit = java.lang.management.ManagementFactory.getCompilationMXBean();
            long deadline = System.nanoTime() + WARM_UP_LIMIT.toNanos();
            long compiled = -1;
            for (int idle = 0, block = 0; (idle < 5 || block < 20) && System.nanoTime() < deadline; block++) {
                for (int i = 0; i < 1000; i++) {
                    step.accept(i);
                }
                long now = jit.getTotalCompilationTime();
                idle = now == compiled ? idle + 1 : 0;
                compiled = now;
            }
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

    /** gatun's nftables driver in this process, warm. */
    static final class GatunInProcess extends Subject {
        final NetworkDriver driver;
        private final InetAddress container = InetAddress.ofLiteral(CONTAINER);
        private final int sampleWidth;

        GatunInProcess() {
            this(1);
        }

        /** {@code sampleWidth}: how many ports each sample publishes, so that the warm-up does the same. */
        GatunInProcess(int sampleWidth) {
            super("gatun");
            this.sampleWidth = sampleWidth;
            driver = Gatun.open(ns, "nftables");
            driver.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
        }

        @Override
        void populate(int existing) {
            if (existing > 0) {
                driver.publish("n1", InetAddress.ofLiteral("10.88.0.9"),
                        existingSpecs(existing).stream().map(PortSpec::parse).toList(), "bench");
            }
        }

        /**
         * A long-running engine publishes all day: measure it compiled, as the C floor is. On two
         * cores the JIT takes tens of thousands of publishes to finish compiling this path (seen
         * with -XX:+PrintCompilation), so warm up until the JIT has been idle for five blocks of
         * publishes in a row. The warm-up calls publish exactly as a sample does (the same kind of
         * list, the same sizes): code compiled for another call shape is thrown away at the first
         * sample (an uncommon trap) and runs unoptimized for the rest of a short run.
         */
        @Override
        void warmUp() {
            InetAddress other = InetAddress.ofLiteral("10.88.0.8");
            int width = sampleWidth;
            untilJitIdle(i -> {
                // Above what populate (up to 50,000) and the samples (52,000 on) use.
                int first = 60000 + (i * width) % 5000;
                List<PortSpec> spec = specs(java.util.stream.IntStream.range(first, first + width).boxed().toList());
                driver.publish("n1", other, spec, "warmup");
                driver.unpublish("n1", other, spec, "warmup");
            });
        }

        @Override
        long publish(List<Integer> ports) {
            List<PortSpec> specs = specs(ports);
            long t = System.nanoTime();
            driver.publish("n1", container, specs, "bench");
            return (System.nanoTime() - t) / 1000;
        }

        private static List<PortSpec> specs(List<Integer> ports) {
            return ports.stream().map(p -> PortSpec.parse(p + ":" + p)).toList();
        }

        @Override
        public void close() {
            driver.close();
            super.close();
        }
    }

    /** Another subject that shares gatun's table layout, populated through gatun. */
    abstract static class OnGatunTable extends Subject {
        OnGatunTable(String tool) {
            super(tool);
            try (NetworkDriver d = Gatun.open(ns, "nftables")) {
                d.createNetwork(NetworkSpec.of("n1", Prefix.parse("10.88.0.0/16")));
            }
        }

        @Override
        void populate(int existing) {
            if (existing > 0) {
                try (NetworkDriver d = Gatun.open(ns, "nftables")) {
                    d.publish("n1", InetAddress.ofLiteral("10.88.0.9"),
                            existingSpecs(existing).stream().map(PortSpec::parse).toList(), "bench");
                }
            }
        }
    }

    /** The one-shot command, a new JVM per publish, as a script runs it. */
    static final class GatunCli extends OnGatunTable {
        private final Path launcher;

        GatunCli(Path root) {
            super("gatun-cli");
            launcher = root.resolve("gatun");
        }

        @Override
        long publish(List<Integer> ports) {
            List<String> cmd = new ArrayList<>(List.of(launcher.toString(), "--netns", ns.name(), "publish", "n1", CONTAINER));
            for (int p : ports) {
                cmd.add("-p");
                cmd.add(p + ":" + p);
            }
            return Processes.time(cmd, null);
        }
    }

    /** The C program that sends exactly gatun's messages: the floor. Kept running, like gatun in-process. */
    static final class CReference extends OnGatunTable {
        private final Process process;
        private final java.io.BufferedReader answers;
        private final java.io.PrintWriter requests;

        CReference(Path binary) {
            super("c");
            try {
                process = new ProcessBuilder("ip", "netns", "exec", ns.name(), binary.toString(), "1", CONTAINER, "1",
                        "bench", "0").redirectError(ProcessBuilder.Redirect.INHERIT).start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start " + binary + ": " + e.getMessage(), e);
            }
            answers = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            requests = new java.io.PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        @Override
        long publish(List<Integer> ports) {
            long total = 0;
            for (int p : ports) {
                total += publishInARow(List.of(p)).getFirst();
            }
            return total;
        }

        /**
         * Consecutive ports in one request ("PORT COUNT"): the program publishes them in a row,
         * as gatun in-process does, rather than sleeping on its pipe between them.
         */
        @Override
        List<Long> publishInARow(List<Integer> ports) {
            for (int i = 1; i < ports.size(); i++) {
                if (ports.get(i) != ports.getFirst() + i) {
                    throw new IllegalArgumentException("the C reference publishes consecutive ports in a row: " + ports);
                }
            }
            requests.println(ports.getFirst() + " " + ports.size());
            List<Long> out = new ArrayList<>();
            try {
                for (int i = 0; i < ports.size(); i++) {
                    String line = answers.readLine();
                    if (line == null) {
                        throw new IllegalStateException("the C reference stopped");
                    }
                    out.add(Long.parseLong(line.strip()));
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return out;
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

    /** The nft binary, one process per change. */
    static final class NftBinary extends OnGatunTable {
        NftBinary() {
            super("nft");
        }

        @Override
        long publish(List<Integer> ports) {
            StringBuilder elements = new StringBuilder();
            for (int p : ports) {
                elements.append(elements.isEmpty() ? "" : ", ").append("tcp . ").append(p)
                        .append(" comment \"bench\" : ").append(CONTAINER).append(" . ").append(p);
            }
            return Processes.time(List.of("nsenter", "--net=" + ns.path(), "nft", "add", "element", "inet", "gatun",
                    "ports4", "{ " + elements + " }"), null);
        }
    }

    /**
     * iptables as Docker runs it: for every port, a -C check and then -A for each of its DNAT,
     * ACCEPT and hairpin MASQUERADE rules, every call its own process with -w.
     */
    static final class DockerIptables extends Subject {
        private final String iptables;

        DockerIptables(String variant) {
            super(variant);
            this.iptables = variant;
            Processes.check(in(List.of(iptables, "-w", "-t", "nat", "-N", "DOCKER")));
            Processes.check(in(List.of(iptables, "-w", "-t", "filter", "-N", "DOCKER")));
            Processes.check(in(List.of("ip", "link", "add", BRIDGE, "type", "bridge")));
        }

        private List<String> in(List<String> cmd) {
            List<String> out = new ArrayList<>(List.of("nsenter", "--net=" + ns.path()));
            out.addAll(cmd);
            return out;
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
            Processes.check(in(List.of(iptables + "-restore", "-w", "--noflush")), nat + "COMMIT\n");
            Processes.check(in(List.of(iptables + "-restore", "-w", "--noflush")), filter + "COMMIT\n");
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
                    for (String op : List.of("-C", "-A")) {
                        List<String> cmd = new ArrayList<>(List.of(iptables, "-w", rule.get(0), rule.get(1), op));
                        cmd.addAll(rule.subList(2, rule.size()));
                        total += Processes.time(in(cmd), null);
                    }
                }
            }
            return total;
        }
    }

    /** Docker 29's nftables backend shape: a rule per port in a shared chain, through nft -f. */
    static final class DockerNftShape extends Subject {
        DockerNftShape() {
            super("docker-nft-shape");
            Processes.check(List.of("nsenter", "--net=" + ns.path(), "nft", "-f", "-"),
                    "table ip docker-bridges {\n chain dnat-gatun { type nat hook prerouting priority dstnat; }\n"
                            + " chain filter-forward { type filter hook forward priority filter; }\n}\n");
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
            Processes.check(List.of("nsenter", "--net=" + ns.path(), "nft", "-f", "-"), s.toString());
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
            return Processes.time(List.of("nsenter", "--net=" + ns.path(), "nft", "-f", "-"), s.toString());
        }
    }

    /** Running the tools. */
    static final class Processes {
        private Processes() {}

        /** Wall time of the whole process in microseconds; fails if it fails. */
        static long time(List<String> cmd, String stdin) {
            long t = System.nanoTime();
            run(cmd, stdin, true);
            return (System.nanoTime() - t) / 1000;
        }

        static void check(List<String> cmd) {
            run(cmd, null, true);
        }

        static void check(List<String> cmd, String stdin) {
            run(cmd, stdin, true);
        }

        static String output(List<String> cmd) {
            return run(cmd, null, true);
        }

        private static String run(List<String> cmd, String stdin, boolean mustSucceed) {
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                try (var in = p.getOutputStream()) {
                    if (stdin != null) {
                        in.write(stdin.getBytes(StandardCharsets.UTF_8));
                    }
                }
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(10, TimeUnit.MINUTES)) {
                    p.destroyForcibly();
                    throw new IllegalStateException("timed out: " + String.join(" ", cmd));
                }
                boolean check = cmd.contains("-C");
                if (mustSucceed && p.exitValue() != 0 && !check) {
                    throw new IllegalStateException(String.join(" ", cmd.subList(0, Math.min(cmd.size(), 8))) + " ... exited "
                            + p.exitValue() + ": " + out.strip());
                }
                return out;
            } catch (IOException e) {
                throw new IllegalStateException("cannot run " + cmd.getFirst() + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }
}
