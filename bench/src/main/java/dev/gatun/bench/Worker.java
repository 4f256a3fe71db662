package dev.gatun.bench;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.HealableDriver;
import dev.gatun.driver.HostPortCheck;
import dev.gatun.driver.SelfHealingDriver;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NetworkNamespace;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * A JVM of its own for one in-process tool in one case, driven over its standard input as the C
 * floor is. The harness JVM sets every tool up through gatun (100,000 mappings for some) and runs
 * their processes; measured in that JVM, gatun's publish path was compiled from whatever the
 * case's history left in its profiles, and in one case of about five it ran 25% to 90% slower
 * (its minimum too) while the C program's did not move. A JVM per case, as JMH forks one per
 * benchmark, compiles the path from its warm-up and samples alone.
 *
 * <p>Arguments: {@code gatun|gatun-followed|java-floor NAMESPACE WIDTH}; the namespace already holds gatun's
 * table and network {@code n1}. Requests, one per line: {@code warm} (publishes until the JIT is
 * idle, then answers {@code ready}), {@code settle} (waits until the JIT is idle, then answers
 * {@code ready}), or {@code FIRST COUNT}: COUNT publishes in a row of WIDTH consecutive ports
 * each from FIRST on, answered by one line of microseconds per publish.
 */
public final class Worker {

    private static final Duration WARM_UP_LIMIT = Duration.ofSeconds(20);

    /** One in-process tool: what a sample calls, and one step of its warm-up. */
    interface Tool extends AutoCloseable {
        /** Publishes ports {@code first} to {@code first + width - 1}; returns the microseconds it took. */
        long publish(int first, int width);

        /** One warm-up call (given 0 to 999), with the samples' call shape, on ports the samples do not use. */
        void warmUpStep(int i, int width);

        @Override
        void close();
    }

    private Worker() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: Worker gatun|gatun-followed|java-floor NAMESPACE WIDTH");
            System.exit(2);
        }
        NetworkNamespace ns = NetworkNamespace.named(args[1]);
        int width = Integer.parseInt(args[2]);
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        var out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        try (Tool tool = switch (args[0]) {
            case "gatun" -> new GatunTool(ns, false);
            case "gatun-followed" -> new GatunTool(ns, true);
            case "java-floor" -> new JavaFloor(ns);
            default -> throw new IllegalArgumentException("unknown in-process tool: " + args[0]);
        }) {
            for (String line; (line = in.readLine()) != null; ) {
                switch (line) {
                    case "warm" -> {
                        untilJitIdle(i -> tool.warmUpStep(i, width));
                        out.println("ready");
                    }
                    case "settle" -> {
                        awaitIdleJit();
                        out.println("ready");
                    }
                    default -> {
                        out.print(publishRow(tool, line, width));
                        out.flush();
                    }
                }
            }
        }
    }

    /** Answers "FIRST COUNT": COUNT publishes of {@code width} ports in a row, a line of microseconds each. */
    private static String publishRow(Tool tool, String request, int width) {
        String[] fields = request.strip().split(" ");
        int first = Integer.parseInt(fields[0]);
        int count = Integer.parseInt(fields[1]);
        long[] micros = new long[count];
        for (int i = 0; i < count; i++) {
            micros[i] = tool.publish(first + i * width, width);
        }
        StringBuilder answer = new StringBuilder();
        for (long m : micros) {
            answer.append(m).append('\n');
        }
        return answer.toString();
    }

    /**
     * Runs blocks of a thousand calls of {@code step} (given 0 to 999) until the JIT has
     * compiled nothing for five blocks in a row, at least twenty blocks and at most the warm-up
     * limit: on two cores the JIT takes tens of thousands of publishes to finish compiling the
     * path (seen with -XX:+PrintCompilation).
     */
    static void untilJitIdle(IntConsumer step) {
        var jit = ManagementFactory.getCompilationMXBean();
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

    /** Waits (at most ten seconds) until this JVM's JIT has compiled nothing for three tenths of a second in a row. */
    static void awaitIdleJit() {
        var jit = ManagementFactory.getCompilationMXBean();
        long deadline = System.nanoTime() + 10_000_000_000L;
        long compiled = jit.getTotalCompilationTime();
        for (int idle = 0; idle < 3 && System.nanoTime() < deadline; ) {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            long now = jit.getTotalCompilationTime();
            idle = now == compiled ? idle + 1 : 0;
            compiled = now;
        }
    }

    /**
     * gatun's nftables driver, as an engine embedding it calls it; {@code followed}: inside the
     * self-healing driver, as serve runs it, which plans from memory, publishing without the
     * host-socket question, as the engine adapters do.
     */
    static final class GatunTool implements Tool {
        private final GatunDriver driver;
        private final HostPortCheck check;
        private final InetAddress container = InetAddress.ofLiteral(Subjects.CONTAINER);

        GatunTool(NetworkNamespace ns, boolean followed) {
            HealableDriver plain = Gatun.open(ns, "nftables");
            driver = followed ? SelfHealingDriver.start(plain, line -> {}) : plain;
            check = followed ? HostPortCheck.SKIP : HostPortCheck.CHECK;
        }

        @Override
        public long publish(int first, int width) {
            List<PortSpec> specs = specs(first, width);
            long t = System.nanoTime();
            driver.publish(new PortRequest("n1", container, specs, "bench"), check);
            return (System.nanoTime() - t) / 1000;
        }

        /**
         * Publishes exactly as a sample does (the same container and owner, the same kind of list,
         * the same sizes), then unpublishes again so that the warm-up leaves nothing behind: code
         * compiled for another call shape is thrown away at the first sample (an uncommon trap).
         */
        @Override
        public void warmUpStep(int i, int width) {
            // Above what the existing mappings (up to 50,000) and the samples (52,000 on) use.
            List<PortSpec> spec = specs(60000 + (i * width) % 5000, width);
            driver.publish(new PortRequest("n1", container, spec, "bench"), check);
            driver.unpublish(new PortRequest("n1", container, spec, "bench"));
        }

        private static List<PortSpec> specs(int first, int width) {
            return IntStream.range(first, first + width).mapToObj(p -> PortSpec.parse(p + ":" + p)).toList();
        }

        @Override
        public void close() {
            driver.close();
        }
    }
}
