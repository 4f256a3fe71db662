package dev.gatun.cli.command;

import dev.gatun.cli.serve.ServeWarmUp;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Failure;
import dev.gatun.cli.serve.HeapKeeper;
import dev.gatun.cli.service.Served;
import dev.gatun.facade.Gatun;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.wire.StartLock;
import dev.gatun.cli.docker.DockerPlugin;
import dev.gatun.cli.serve.ApiSockets;
import dev.gatun.cli.docker.PluginServer;
import dev.gatun.cli.dockerd.DockerFollower;
import dev.gatun.cli.events.EventLog;
import dev.gatun.cli.host.SystemdNotify;
import dev.gatun.cli.metrics.MetricsAddress;
import dev.gatun.cli.metrics.ServeMetrics;
import dev.gatun.driver.HealListener;
import dev.gatun.EnvironmentException;
import dev.gatun.driver.GatunDriver;
import dev.gatun.driver.HealableDriver;
import dev.gatun.driver.SelfHealingDriver;
import dev.gatun.netns.NetworkNamespace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;

/** The long-running driver: desired state in memory, repaired when others remove it, optionally Docker's plugin. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run as a long-running driver for one host namespace until SIGTERM or SIGINT.",
                "Keeps the ports published through it (and those found at start) in place: when gatun's table, sets or "
                        + "elements are removed from outside (nft flush ruleset, a firewall reload) it puts them back "
                        + "within a second and logs what it repaired. Stopping removes nothing."},
        footer = {"", "With --docker-plugin, serves Docker's remote network-driver protocol on",
                "/run/docker/plugins/NAME.sock (mode 0600), so that",
                "  docker network create -d NAME --subnet 10.89.0.0/24 [-o gatun.icc=false] \\",
                "      [-o gatun.bridge=BR] [-o gatun.mtu=N] [--internal] NET",
                "  docker run --network NET -p 8080:80 ...",
                "publish through gatun. gatun names the network after the first 12 digits of",
                "Docker's network id; mappings are owned by Docker's endpoint id.",
                "", "With --docker, follows dockerd (run with --iptables=false --ip6tables=false)",
                "and keeps every running container's published ports (docker run -p, on",
                "Docker's bridge networks, as dockerd recorded them) in gatun's table, owned",
                "by docker:CONTAINER_ID; reconciled with dockerd's lists at every connect",
                "(the ready line comes after the first). A port that another process than",
                "dockerd or docker-proxy holds is not published, and the log says who holds it.",
                "", "Always serves the local API on /run/gatun/netns-INODE.sock (root only):",
                "one-shot gatun commands for this namespace run through it, and so can any",
                "HTTP client (see README).",
                "", "Prints one line starting with 'ready' on stdout when serving; logs go to",
                "stderr. Under systemd (NOTIFY_SOCKET set, gatun.service of gatun install)",
                "it sends READY=1 at the same moment.",
                "", "Examples:", "  gatun serve", "  gatun serve --docker-plugin", "  gatun serve --docker", "  gatun --netns lab serve --docker-plugin gatun-test"})
final class ServeCommand extends Base {

    /** Each log line's time, always with its milliseconds (LocalTime's own text drops them when they are 0). */
    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    /**
     * How long a stop lets requests in flight finish: SIGTERM to exit stays under two seconds
     * (the JVM's own exit and the driver's close take the rest).
     */
    static final long DRAIN_MILLIS = 1_500;

    /** How long the ready line waits for the first reconcile with dockerd (a slow dockerd still starts the serve). */
    private static final Duration DOCKERD_FIRST_PASS = Duration.ofSeconds(30);

    @Option(names = "--docker-plugin", arity = "0..1", fallbackValue = "gatun", paramLabel = "NAME",
            description = "Also serve Docker's network-driver protocol as plugin NAME (default name: gatun).")
    String pluginName;

    @Option(names = "--docker", description = "Also follow dockerd (started with --iptables=false --ip6tables=false)"
            + " and keep the published ports of its containers on its bridge networks in gatun's table.")
    boolean docker;

    @Option(names = "--docker-host", paramLabel = "unix:///PATH",
            description = "dockerd's socket for --docker (default: $DOCKER_HOST, else unix:///var/run/docker.sock).")
    String dockerHost;

    @Option(names = "--metrics", paramLabel = "[ADDRESS:]PORT",
            description = "Serve Prometheus metrics on http://ADDRESS:PORT/metrics (ADDRESS: an IP address, default"
            + " 127.0.0.1; another than loopback only when named). Off by default.")
    String metrics;

    @Option(names = "--no-warm-up", description = "Ready at once: without first running the request path on a throwaway"
            + " namespace until the JIT has compiled it (7 to 8 s here, 12 at most; without it a serve's first"
            + " containers and first hundred requests take several times as long).")
    boolean noWarmUp;

    @Option(names = "--log-requests", description = "Log every request of the local API (and each command it ran) on stderr.")
    boolean logRequests;

    @Override
    public Integer call() throws InterruptedException {
        Path socket = pluginName == null ? null : PluginServer.socketOf(pluginName);
        PrintWriter err = stderr();
        Consumer<String> log = line -> {
            synchronized (err) {
                err.println(LocalTime.now().format(LOG_TIME) + " gatun serve: " + line);
                err.flush();
            }
        };
        Path dockerSocket = null;
        if (docker) {
            String given = dockerHost != null ? dockerHost : System.getenv("DOCKER_HOST");
            dockerSocket = DockerFollower.socketOf(given == null || given.isEmpty() ? "unix:///var/run/docker.sock" : given);
        } else if (dockerHost != null) {
            throw new InvalidInputException("--docker-host " + dockerHost + " goes with --docker");
        }
        InetSocketAddress metricsAddress = metrics == null ? null : MetricsAddress.parse(metrics);
        CountDownLatch stop = new CountDownLatch(1);
        Signal.handle(new Signal("TERM"), s -> stop.countDown());
        Signal.handle(new Signal("INT"), s -> stop.countDown());

        NetworkNamespace host = root().host();
        String driverName = root().driverName();
        // Alone from before the kernel is read until the socket answers: a one-shot command
        // running in a JVM of its own finishes first, and later ones come here (see StartLock).
        StartLock starting = StartLock.forServe();
        GatunDriver driver;
        EventLog events = new EventLog();
        ServeMetrics meter;
        try {
            meter = metricsAddress == null ? null : startMetrics(metricsAddress);
        } catch (RuntimeException e) {
            starting.close();
            throw e;
        }
        try {
            driver = servedDriver(host, driverName, log, events, meter);
        } catch (RuntimeException e) {
            starting.close();
            if (meter != null) {
                meter.close();
            }
            throw e;
        }
        if (!driverName.equals("nftables")) {
            log.accept("driver " + driverName + ": running without self-healing, which needs the nftables driver");
        }
        CommandLines.prepareServedCommands();
        // The driver is closed unless a request may still run in it (see below).
        boolean[] stillRunning = {false};
        Release closeDriver = () -> {
            if (!stillRunning[0]) {
                driver.close();
            }
        };
        ObjIntConsumer<String> answered = meter == null ? null : meter::request;
        try (closeDriver; starting; ServeMetrics closeMetrics = meter;
             ApiSockets api = ApiSockets.start(new Served(host, driverName, driver), CommandLines::run,
                logRequests ? log : null, events, answered, log);
             PluginServer server = socket == null ? null : PluginServer.start(new DockerPlugin(driver, log), socket, answered);
             HeapKeeper heap = HeapKeeper.start(log);
             DockerFollower dockerd = dockerSocket == null ? null : DockerFollower.start(dockerSocket, driver, log)) {
            starting.close();
            if (!noWarmUp && driverName.equals("nftables")) {
                // A SIGTERM meanwhile ends it: the stop stays as quick as at any other time.
                warmUp(log, logRequests, () -> stop.getCount() == 0);
            }
            if (dockerd != null && !dockerd.awaitFirstPass(DOCKERD_FIRST_PASS)) {
                log.accept("dockerd on " + dockerSocket + " has not answered in " + DOCKERD_FIRST_PASS.toSeconds()
                        + " s; ready with what the kernel holds, following it once it answers");
            }
            String what = "API on " + api.socket() + (server == null ? "" : ", docker plugin " + pluginName + " on "
                    + server.socket()) + (dockerd == null ? "" : ", following dockerd on " + dockerSocket)
                    + (meter == null ? "" : ", metrics on http://" + hostText(metricsAddress) + ":" + meter.port() + "/metrics")
                    + ", watching " + host.describe();
            SystemdNotify systemd = SystemdNotify.fromEnvironment();
            // A SIGTERM during the warm-up: stopping, so never ready (nothing is to start against it).
            if (stop.getCount() > 0) {
                PrintWriter out = stdout();
                out.println("ready: " + what + " (driver " + driverName + ")");
                out.flush();
                // Under systemd (Type=notify): ready only now, when the kernel was read and the API answers.
                notify(systemd, "READY=1\nSTATUS=serving " + what, log);
                heap.ready();
            }
            stop.await();
            notify(systemd, "STOPPING=1", log);
            // Stop taking requests (the sockets go; a request that still arrives gets 503 and
            // runs nothing, and the C client then runs its command itself), let those in flight
            // finish and answer, for at most DRAIN_MILLIS, then exit. A request still running
            // after that loses its connection: its one transaction is in the kernel or not, never
            // half, and the driver is left open under it rather than closed in its hands.
            log.accept("stopping: taking no new requests, finishing those in flight");
            events.close(); // event streams end now rather than hold the drain up
            CompletableFuture<Void> inFlight = CompletableFuture.allOf(api.shutdown(),
                    server == null ? CompletableFuture.completedFuture(null) : server.shutdown());
            try {
                inFlight.get(DRAIN_MILLIS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                stillRunning[0] = true;
                log.accept("requests still running after " + DRAIN_MILLIS + " ms; stopping without their answers");
            } catch (ExecutionException e) {
                log.accept("stopping: " + e.getCause());
            }
            log.accept("stopping; the kernel keeps every network, endpoint and port; " + api.commands().sentence());
        }
        return ExitCode.OK;
    }

    /**
     * Runs the request path on a throwaway namespace before the ready line (see ServeWarmUp); a
     * failure is logged and the serve starts without it, as it would with --no-warm-up.
     */
    private static void warmUp(Consumer<String> log, boolean logRequests, BooleanSupplier stopping) {
        try {
            // Built as the serve's own driver is (listeners and request log included), so that
            // the code compiled for it is the code the serve's requests run.
            ServeWarmUp.Outcome done = ServeWarmUp.run((ns, events) -> servedDriver(ns, "nftables", line -> { }, events, null),
                    CommandLines::run, logRequests ? line -> { } : null, stopping);
            // What the warm-up allocated is garbage now: one full collection before the ready
            // line gives the heap it grew back (the serial collector shrinks only then).
            System.gc();
            String why = done.settled() ? "" : stopping.getAsBoolean() ? " (cut short: stopping)"
                    : " (at its limit; the compilers were still busy)";
            log.accept("warmed up: " + done.pairs() + " publish and unpublish pairs and " + done.containers()
                    + " containers through the netavark plugin (" + done.containersMillis() + " ms) on a throwaway namespace in "
                    + done.millis() + " ms" + why);
        } catch (RuntimeException e) {
            log.accept("warm-up failed, starting without it: " + Failure.sentence(e));
        }
    }

    /**
     * The driver a serve of {@code host} runs: self-healing with the nftables driver, telling
     * {@code events} (and {@code meter}, or null) of what it does and repairs.
     */
    private static GatunDriver servedDriver(NetworkNamespace host, String driverName, Consumer<String> log,
                                            EventLog events, ServeMetrics meter) {
        HealableDriver plain = Gatun.open(host, driverName);
        GatunDriver driver = driverName.equals("nftables")
                ? SelfHealingDriver.start(plain, log, HealListener.both(events, meter)) : plain;
        driver.listen(events);
        if (meter != null) {
            meter.follow(driver);
        }
        return driver;
    }

    private static ServeMetrics startMetrics(InetSocketAddress address) {
        try {
            return ServeMetrics.start(address);
        } catch (IOException e) {
            throw new EnvironmentException("serve --metrics: cannot listen on " + hostText(address) + ":" + address.getPort()
                    + ": " + e.getMessage());
        }
    }

    private static String hostText(InetSocketAddress a) {
        String h = a.getAddress().getHostAddress();
        return h.contains(":") ? "[" + h + "]" : h;
    }

    private static void notify(SystemdNotify systemd, String state, Consumer<String> log) {
        if (systemd == null) {
            return;
        }
        try {
            systemd.send(state);
        } catch (RuntimeException e) {
            log.accept("could not tell systemd " + state.lines().findFirst().orElse("") + ": " + e.getMessage());
        }
    }

    /** A resource whose close throws nothing checked. */
    private interface Release extends AutoCloseable {
        @Override
        void close();
    }
}
