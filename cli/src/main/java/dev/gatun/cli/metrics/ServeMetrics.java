package dev.gatun.cli.metrics;

import dev.gatun.cli.service.Failure;
import dev.gatun.driver.DriverStats;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.HealListener;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.SelfHealingDriver;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The serve's Prometheus metrics, on {@code http://ADDRESS:PORT/metrics} with Prometheus' own
 * client library: publish and unpublish latency, commits and their sizes, retries, repairs by
 * cause, outside changes, mappings per network, foreign drops opened, API requests, and the
 * process's memory. Made only when {@code --metrics} is given: none of it loads otherwise.
 */
public final class ServeMetrics implements DriverStats.Observer, HealListener, AutoCloseable {

    /** Seconds, from 50 us to 10 s: a warm publish is ~0.1 ms, a repair of 100,000 mappings seconds. */
    private static final double[] SECONDS = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Histogram portChanges = Histogram.builder().name("gatun_port_change_duration_seconds")
            .help("Publish and unpublish requests the serve ran, by operation and outcome")
            .unit(Unit.SECONDS).labelNames("operation", "outcome").classicUpperBounds(SECONDS).classicOnly()
            .register(registry);
    private final Counter mappingsChanged = Counter.builder().name("gatun_mappings_changed_total")
            .help("Mappings published or unpublished, by operation").labelNames("operation").register(registry);
    private final Histogram commitSizes = Histogram.builder().name("gatun_commit_requests")
            .help("Requests carried by each commit of port changes (concurrent requests share one transaction)")
            .labelNames("outcome").classicUpperBounds(1, 2, 4, 8, 16, 32, 64, 128, 256).classicOnly().register(registry);
    private final Counter retries = Counter.builder().name("gatun_commit_retries_total")
            .help("Commits planned again after a stale read or a lost reply").register(registry);
    private final Histogram repairs = Histogram.builder().name("gatun_repair_duration_seconds")
            .help("Repairs that put something back, by cause").unit(Unit.SECONDS).labelNames("cause")
            .classicUpperBounds(SECONDS).classicOnly().register(registry);
    private final Counter repairFailures = Counter.builder().name("gatun_repair_failures_total")
            .help("Repairs that failed (each is tried again), by cause").labelNames("cause").register(registry);
    private final Counter outsideChanges = Counter.builder().name("gatun_outside_changes_total")
            .help("Transactions of other processes that changed gatun's table").register(registry);
    private final Counter apiRequests = Counter.builder().name("gatun_api_requests_total")
            .help("Requests of the local API and the Docker plugin, by path and HTTP status")
            .labelNames("path", "status").register(registry);
    private final HTTPServer server;
    /** The serve's driver once it is open; the gauges have no samples before. */
    private volatile GatunDriver driver;

    private ServeMetrics(InetSocketAddress address) throws IOException {
        GaugeWithCallback.builder().name("gatun_published_mappings").help("Mappings the serve keeps, by network")
                .labelNames("network").callback(cb -> {
                    GatunDriver d = driver;
                    if (d != null) {
                        perNetwork(d).forEach((n, c) -> cb.call(c, n));
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("gatun_foreign_drops_opened")
                .help("Other firewalls' drops gatun opened for its networks").callback(cb -> {
                    GatunDriver d = driver;
                    try {
                        if (d != null) {
                            cb.call(d.foreignDrops().size());
                        }
                    } catch (RuntimeException e) {
                        // not readable now (another firewall mid-reload): no sample this scrape
                    }
                }).register(registry);
        JvmMetrics.builder().register(registry); // process_resident_memory_bytes, jvm_memory_used_bytes, ...
        server = HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort()).registry(registry)
                .buildAndStart();
    }

    /** Starts serving the metrics on {@code address} and observing the drivers of this process. */
    public static ServeMetrics start(InetSocketAddress address) throws IOException {
        ServeMetrics m = new ServeMetrics(address);
        DriverStats.observe(m);
        return m;
    }

    /** The serve's driver, whose mappings and opened drops the gauges show. */
    public void follow(GatunDriver serving) {
        this.driver = serving;
    }

    /** The port it listens on (the one asked, or the one the kernel chose for 0). */
    public int port() {
        return server.getPort();
    }

    /** One API or plugin request answered. Paths are cut to their first two segments, so the label stays bounded. */
    public void request(String path, int status) {
        String[] s = path.split("/", 4);
        String shortPath = s.length >= 3 ? "/" + s[1] + "/" + s[2] : path;
        apiRequests.labelValues(shortPath, Integer.toString(status)).inc();
    }

    @Override
    public void portsChanged(String operation, int mappings, Duration took, RuntimeException failure) {
        String outcome = failure == null ? "ok" : Failure.of(failure).name().toLowerCase(Locale.ROOT);
        portChanges.labelValues(operation, outcome).observe(took.toNanos() / 1e9);
        if (mappings > 0) {
            mappingsChanged.labelValues(operation).inc(mappings);
        }
    }

    @Override
    public void committed(int requests, int retried, boolean applied) {
        commitSizes.labelValues(applied ? "applied" : "failed").observe(requests);
        if (retried > 0) {
            retries.inc(retried);
        }
    }

    @Override
    public void changedOutside(String what, String by) {
        outsideChanges.inc();
    }

    @Override
    public void repaired(List<String> lines, Cause kind, String cause, Duration took) {
        repairs.labelValues(kind.name().toLowerCase(Locale.ROOT)).observe(took.toNanos() / 1e9);
    }

    @Override
    public void repairFailed(String message, Cause kind, String cause) {
        repairFailures.labelValues(kind.name().toLowerCase(Locale.ROOT)).inc();
    }

    private static Map<String, Integer> perNetwork(GatunDriver driver) {
        Map<String, Integer> counts = new TreeMap<>();
        List<PortMapping> kept = driver instanceof SelfHealingDriver h ? h.wanted() : driver.published(null);
        for (PortMapping m : kept) {
            counts.merge(m.network(), 1, Integer::sum);
        }
        return counts;
    }

    @Override
    public void close() {
        DriverStats.observe(null);
        server.close();
    }
}
