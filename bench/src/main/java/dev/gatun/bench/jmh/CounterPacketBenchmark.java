package dev.gatun.bench.jmh;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.Endpoint;
import dev.gatun.driver.EndpointSpec;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.NetworkSpec;
import dev.gatun.driver.PortSpec;
import dev.gatun.driver.PortRequest;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Prefix;
import dev.gatun.nft.Chain;
import dev.gatun.nft.ChainType;
import dev.gatun.nft.value.Family;
import dev.gatun.nft.Hook;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Priority;
import dev.gatun.nft.Table;
import dev.gatun.nft.value.Verdict;
import dev.gatun.rtnl.Rtnetlink;
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

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a per-port counter costs a packet: one 32-byte UDP datagram sent from an outside
 * namespace through a published port into a container, on a network without and with counters.
 * The kernel forwards a veth's packet in the sender's own system call (netif_rx, then the
 * softirq as it returns), so the time per send holds the whole path, dnat, forward and the
 * counting chain included. The container drops what arrives in an input chain of its own: no
 * socket to wake and no ICMP error back, so that nothing but the path is timed.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CounterPacketBenchmark {

    private static final String HOST_ADDRESS = "192.0.2.1";

    @Param({"false", "true"})
    boolean counters;

    private final String tag = "gatun-jmh-pkt-" + ProcessHandle.current().pid() + "-";
    private NetworkNamespace host;
    private NetworkNamespace outside;
    private NetworkNamespace container;
    private GatunDriver driver;
    private DatagramChannel sender;
    private final ByteBuffer datagram = ByteBuffer.wrap("ping".getBytes());

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        host = NamedNamespaces.create(tag + "host");
        outside = NamedNamespaces.create(tag + "out");
        container = NamedNamespaces.create(tag + "c1");
        try (Rtnetlink rt = Rtnetlink.open(host)) {
            rt.createVeth("gout", null, "eth0", null, outside, null);
            rt.addAddress("gout", Prefix.parse(HOST_ADDRESS + "/24"));
            rt.setUp("gout", true);
            rt.setUp("lo", true);
        }
        try (Rtnetlink rt = Rtnetlink.open(outside)) {
            rt.addAddress("eth0", Prefix.parse("192.0.2.2/24"));
            rt.setUp("eth0", true);
            rt.setUp("lo", true);
        }
        driver = Gatun.open(host, "nftables");
        driver.createNetwork(NetworkSpec.named("n1").subnet4(Prefix.parse("10.88.0.0/16")).counters(counters).build());
        Endpoint e = driver.attach(EndpointSpec.of("n1", container));
        driver.publish(new PortRequest("n1", e.ip(), List.of(PortSpec.parse("8080:80/udp")), "bench"));
        try (Nftables nft = Nftables.open(container)) {
            Table sink = Table.of(Family.INET, "sink");
            nft.transaction().add(sink).add(Chain.base(sink, "input", ChainType.FILTER, Hook.INPUT, Priority.FILTER,
                    Verdict.Code.DROP)).commit();
        }
        sender = outside.call(() -> DatagramChannel.open().connect(new InetSocketAddress(InetAddress.ofLiteral(HOST_ADDRESS),
                8080)));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        sender.close();
        driver.close();
        for (NetworkNamespace ns : List.of(container, outside, host)) {
            NamedNamespaces.delete(ns.name());
        }
    }

    @Benchmark
    public int sendOneDatagram() throws IOException {
        datagram.rewind();
        return sender.write(datagram);
    }
}
