package dev.gatun.bench.jmh;

import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Publishing through the nftables driver, in a private namespace: one mapping published and
 * unpublished, a 32-port container, and single mappings from 16 threads through group commit;
 * each on a network without and with per-port counters.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PublishBenchmark {

    /** Mappings present while measuring: the cost must not grow with it. */
    @Param({"0"})
    int existing;

    /** Whether the network's mappings carry counters: what one costs per publish. */
    @Param({"false", "true"})
    boolean counters;

    private Lab lab;
    private final InetAddress container = InetAddress.ofLiteral("10.88.0.2");
    private final List<PortSpec> one = List.of(PortSpec.parse("60000:80"));
    private final List<PortSpec> thirtyTwo = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    @Setup(Level.Trial)
    public void setUp() {
        lab = new Lab(counters);
        lab.populate(existing);
        for (int i = 0; i < 32; i++) {
            thirtyTwo.add(PortSpec.parse((61000 + i) + ":" + (8000 + i)));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        lab.close();
    }

    @Benchmark
    public Object publishAndUnpublishOne() {
        lab.driver.publish(new PortRequest("n1", container, one, "bench"));
        return lab.driver.unpublish(new PortRequest("n1", container, one, "bench"));
    }

    @Benchmark
    public Object publishAndUnpublish32Ports() {
        lab.driver.publish(new PortRequest("n1", container, thirtyTwo, "bench"));
        return lab.driver.unpublish(new PortRequest("n1", container, thirtyTwo, "bench"));
    }

    /** 16 threads each publishing its own new mapping: group commit shares the transactions. */
    @Benchmark
    @Threads(16)
    public Object publishFrom16Threads() {
        int n = next.getAndIncrement();
        return lab.driver.publish(new PortRequest("n1", InetAddress.ofLiteral("10.88." + (1 + n / 60000 % 200) + ".2"),
                List.of(PortSpec.parse((1 + n % 60000) + ":80")), "threads"));
    }
}
