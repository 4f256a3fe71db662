package dev.gatun.bench.jmh;

import dev.gatun.driver.EndpointSpec;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Table;
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

import java.util.concurrent.TimeUnit;

/** The transport and the slower operations: a transaction round trip, listing, attaching an endpoint. */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RoundTripBenchmark {

    @Param({"10000", "100000"})
    int mappings;

    private Lab lab;
    private Nftables nft;
    private NetworkNamespace container;
    private final Table gatun = Table.of(Family.INET, "gatun");

    @Setup(Level.Trial)
    public void setUp() {
        lab = new Lab();
        lab.populate(mappings);
        nft = Nftables.open(lab.ns);
        container = NamedNamespaces.create(lab.ns.name() + "-c");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        nft.close();
        NamedNamespaces.delete(container.name());
        lab.close();
    }

    /** The smallest commit: adding a table that exists, one batch there and back. */
    @Benchmark
    public Object transactionRoundTrip() {
        return nft.transaction().add(gatun).commit();
    }

    @Benchmark
    public Object listMappings() {
        return lab.driver.published("n1");
    }

    /** A veth pair, its peer moved in, addressed, routed and up; then detached again. */
    @Benchmark
    public Object attachAndDetach() {
        var e = lab.driver.attach(EndpointSpec.of("n1", container));
        lab.driver.detach("n1", container, e.ifname());
        return e;
    }
}
