package dev.gatun.bench.jmh;

import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.HostPortCheck;
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

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A host port handed between two containers against publishing it, one operation each, in one
 * run: {@code replace} moves a key to the container that does not own it (a and b in turn);
 * {@code publish} adds a new key (unpublished after each invocation, outside the measure);
 * {@code retargetByItsOwner} moves a key between the two containers by its own owner (one
 * element swapped, no replace: the commit's share). Each operation takes tens of microseconds,
 * so timing every invocation (what a per-invocation teardown needs) costs well under 1% of it.
 * The two containers are endpoints of n1 (a replace checks that its target is one);
 * {@code endpoints} more stand beside them, since that check reads the network's endpoints.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ReplaceBenchmark {

    /** Other endpoints on the network: what the replace's target check reads grows with them. */
    @Param({"0", "100"})
    int endpoints;

    private Lab lab;
    private final InetAddress a = InetAddress.ofLiteral("10.88.0.2");
    private final InetAddress b = InetAddress.ofLiteral("10.88.0.3");
    private final List<PortSpec> port = List.of(PortSpec.parse("60000:80"));
    private final List<PortSpec> fresh = List.of(PortSpec.parse("60001:80"));
    /** Which container the key of {@link #port} goes to next. */
    private boolean toB = true;

    @Setup(Level.Trial)
    public void setUp() {
        lab = new Lab();
        // Endpoints whose container end stays in the host namespace: no container namespace needed.
        lab.driver.attach(EndpointSpec.on("n1").ip(a).ifname("bench-a").owner("a").build());
        lab.driver.attach(EndpointSpec.on("n1").ip(b).ifname("bench-b").owner("b").build());
        for (int i = 0; i < endpoints; i++) {
            lab.driver.attach(EndpointSpec.on("n1").ip(InetAddress.ofLiteral("10.88.1." + (i + 1)))
                    .ifname("bench-" + i).owner("other-" + i).build());
        }
        lab.driver.publish(new PortRequest("n1", a, port, "a"));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        lab.close();
    }

    /** Takes the key from the container that holds it, for the other one. */
    @Benchmark
    public Object replace() {
        toB = !toB;
        return toB ? lab.driver.replace(new PortRequest("n1", a, port, "a"), HostPortCheck.CHECK, false)
                : lab.driver.replace(new PortRequest("n1", b, port, "b"), HostPortCheck.CHECK, false);
    }

    /** Moves the key between the containers by its own owner ("a" throughout). */
    @Benchmark
    public Object retargetByItsOwner() {
        toB = !toB;
        return lab.driver.publish(new PortRequest("n1", toB ? a : b, port, "a"));
    }

    /** Publishes a key nobody holds, as a new container's port. */
    @Benchmark
    public Object publish(Unpublished after) {
        return lab.driver.publish(new PortRequest("n1", b, fresh, "b"));
    }

    /** Removes what {@link #publish} made after each invocation, outside the measured time. */
    @State(Scope.Thread)
    public static class Unpublished {
        @TearDown(Level.Invocation)
        public void unpublish(ReplaceBenchmark bench) {
            bench.lab.driver.unpublish(new PortRequest("n1", bench.b, bench.fresh, "b"));
        }
    }
}
