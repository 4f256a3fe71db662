package dev.gatun.bench.jmh;

import dev.gatun.driver.NetworkDriver;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.SelfHealingDriver;
import dev.gatun.driver.PortRequest;
import dev.gatun.nft.Nftables;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * Does group commit pay through {@code gatun serve}? Each thread publishes a port of its own
 * and unpublishes it again (one op: two calls), from 1 thread and from 16, through
 * {@link SelfHealingDriver} as serve wraps the driver ({@code via=serve}), the same with
 * repairs that do nothing ({@code serve-norepair}: its healer repairs after each of its own
 * unpublishes), or through the driver alone ({@code driver}). {@code commit=group}: the calls
 * reach the Publisher together and share transactions. {@code commit=lock}: every call holds
 * one lock, so each request commits alone, as a plain lock in place of group commit would
 * have it. The score is the time of one op as its thread sees it: throughput is threads / score
 * ops, and a call costs score / (2 * threads) of the process's time. Each iteration prints how
 * many commits the kernel counted per call.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 3)
@Measurement(iterations = 5, time = 2)
public class ServePublishBenchmark {

    @Param({"group", "lock"})
    String commit;

    @Param({"serve", "serve-norepair", "driver"})
    String via;

    private Lab lab;
    private NetworkDriver driver;
    private final ReentrantLock plain = new ReentrantLock();
    private final AtomicInteger threads = new AtomicInteger();
    private final LongAdder calls = new LongAdder();
    private Nftables nft;
    private int generation;

    /** One thread's port and container, its own so that its calls never conflict with another's. */
    @State(Scope.Thread)
    public static class Port {
        List<PortSpec> spec;
        InetAddress container;

        @Setup(Level.Trial)
        public void pick(ServePublishBenchmark b) {
            int t = b.threads.getAndIncrement();
            spec = List.of(PortSpec.parse((20000 + t) + ":80"));
            container = InetAddress.ofLiteral("10.88.0." + (2 + t));
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        lab = new Lab();
        driver = switch (via) {
            case "serve" -> SelfHealingDriver.start(lab.driver, line -> { });
            case "serve-norepair" -> SelfHealingDriver.start(lab.driver, new WithoutRepairs(lab.driver), line -> { });
            default -> lab.driver;
        };
        nft = Nftables.open(lab.ns);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        nft.close();
        driver.close();
        lab.close();
    }

    @Setup(Level.Iteration)
    public void count() {
        calls.reset();
        generation = nft.generation();
    }

    @TearDown(Level.Iteration)
    public void report() {
        System.out.printf("[%.2f commits per call]%n", (nft.generation() - generation) / (double) calls.sum());
    }

    @Benchmark
    @Threads(1)
    public Object oneThread(Port p) {
        return publishAndUnpublish(p);
    }

    @Benchmark
    @Threads(16)
    public Object sixteenThreads(Port p) {
        return publishAndUnpublish(p);
    }

    private Object publishAndUnpublish(Port p) {
        call(() -> driver.publish(new PortRequest("n1", p.container, p.spec, "bench")));
        return call(() -> driver.unpublish(new PortRequest("n1", p.container, p.spec, "bench")));
    }

    private List<PortMapping> call(Supplier<List<PortMapping>> work) {
        calls.increment();
        if (commit.equals("group")) {
            return work.get();
        }
        plain.lock();
        try {
            return work.get();
        } finally {
            plain.unlock();
        }
    }
}
