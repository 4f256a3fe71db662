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

        /** After the unmeasured first round: waits until the tool has finished its own start-up work (a JIT). */
        void settle() {
        }

        /** Publishes host ports {@code ports} (each to the same container port); returns microseconds. */
        abstract long publish(List<Integer> ports);

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

    /**
     * A tool kept running in a process of its own and driven over a pipe: a request "FIRST
     * COUNT" makes it publish COUNT times in a row, the ports from FIRST on, and it answers one
     * line of microseconds per publish, timed inside it.
     */
    abstract static class Piped extends OnGatunTable {
        private final Process process;
        private final java.io.BufferedReader answers;
        private final java.io.PrintWriter requests;

        /** {@code command}: given the namespace's name, the command that starts the tool. */
        Piped(String tool, java.util.function.Function<String, List<String>> command) {
            super(tool);
            List<String> cmd = command.apply(ns.name());
            try {
                process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            } catch (IOException e) {
                throw new IllegalStateException("cannot start " + cmd.getFirst() + ": " + e.getMessage(), e);
            }
            answers = new java.io.BufferedReader(new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            requests = new java.io.PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
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
            return ask(first + " " + count, count).stream().map(Long::parseLong).toList();
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
        CReference(Path binary) {
            super("c", ns -> List.of("ip", "netns", "exec", ns, binary.toString(), "1", CONTAINER, "1", "bench", "0"));
        }

        @Override
        long publish(List<Integer> ports) {
            long total = 0;
            for (int p : ports) {
                total += publishFrom(p, 1).getFirst();
            }
            return total;
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

        /** This JVM's own java and flags, with the worker as main class. */
        private static List<String> workerCommand(String tool, String ns, int width) {
            List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElseThrow());
            cmd.addAll(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
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
