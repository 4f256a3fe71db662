package dev.gatun.cli.serve;

import dev.gatun.cli.service.Served;
import dev.gatun.cli.wire.ServeClient;
import dev.gatun.cli.events.EventLog;
import dev.gatun.driver.GatunDriver;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Rtnetlink;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A serve's run of its own request path before its ready line. The JIT compiles a method only
 * after it ran some hundreds of times, and the ahead-of-time cache holds classes and profiles,
 * not code: without this, a serve's first requests run interpreted while the compilers catch up
 * (a publish took 1 to 12 ms for its first hundred requests, against 0.7 warm). So the serve
 * makes a throwaway namespace, serves it from this JVM exactly as it serves its own (the
 * self-healing driver, the local API and the one-shot socket of that namespace), sends it what a serve gets
 * most, as the C client sends it (containers set up and torn down through the netavark plugin,
 * see {@link NetavarkWarmUp}; then publishes and unpublishes of one port and, every fourth, of a
 * 32-port container, on new ports each time, and now and then a listing, to two more servings of
 * it in turn, see {@link #warmUp}) for some seconds,
 * waits for the compilers to finish what those queued, and removes its namespaces (the served one
 * and the containers') with everything in them. The serve's own namespace, driver, events and
 * metrics see none of it.
 */
public final class ServeWarmUp {

    /**
     * What the warm-up did: containers set up (and how long until their last teardown), pairs
     * sent, how long it all took, and whether the compilers had settled (not the time limit).
     */
    public record Outcome(int pairs, int containers, long containersMillis, long millis, boolean settled) {}

    /** A test network's prefix, inside the throwaway namespace only. */
    public static final String SUBNET = "10.213.0.0/24";
    private static final String CONTAINER_IP = "10.213.0.2";

    /**
     * Servings the publishes go to in turn, after the containers' (see {@link #warmUp}): with one,
     * three places still trapped at every fresh serve's first requests (NftChannel.batch,
     * SharedValues.acquire, ScopedValue.findBinding); with two, none in three 32-port serves and
     * a class check of the JDK's in two of three one-port ones (bench/runs/2026-12-06-017e044.md).
     */
    static final int SERVINGS = 2;

    /** Pairs sent at least, however slow they are: the first tier compiles a method after 200 calls. */
    static final int MIN_PAIRS = 300;

    /** The compilers are settled when they used at most one clock tick over this long. */
    private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    /**
     * How long the requests are sent. The second compiler takes a method after some thousands of
     * calls, and its compilations go on for as long as requests come (measured, bench/README.md
     * "A serve just started"): 5 s of them (some 1,500 pairs here when picocli read every line,
     * some 10,000 since plain lines are read directly) is where longer stopped helping. Counted
     * from the end of the containers (some 2 s), which would otherwise take most of it.
     */
    static final long REQUESTS_MILLIS = 5_000;

    /** The longest the containers are set up and torn down: on a slow host fewer rounds, and the publishes still get their time. */
    static final long CONTAINERS_MILLIS = 4_000;

    /**
     * The longest the publishes and the compilers' catching up take, from the end of the
     * containers: with {@link #CONTAINERS_MILLIS}, the longest the ready line waits for the
     * warm-up (7 to 8 s here). The requests after it finish the compiling.
     */
    static final long LIMIT_MILLIS = 8_000;

    private ServeWarmUp() {}

    /**
     * Warms up the request path of a serve with the nftables driver, the driver of the throwaway
     * namespace opened by {@code open} (telling the events log it is given), the requests logged
     * to {@code requestLog} (or null) as the serve's are; it ends early once {@code stopping} (a
     * SIGTERM while it runs). Its namespaces are gone when this returns.
     */
    public static Outcome run(BiFunction<NetworkNamespace, EventLog, GatunDriver> open, CommandLineRunner commandLines,
                       Consumer<String> requestLog, BooleanSupplier stopping) {
        // A serve or a training killed during its own left its namespace, named after its process.
        ThrowawayNamespaces.removeOrphans();
        long start = System.nanoTime();
        // Only what this run made is removed: a name that exists already is not this run's.
        List<String> made = new ArrayList<>();
        Outcome done;
        try {
            NetworkNamespace ns = create("warm-up", made);
            // With its loopback up, as a host's: an IPv4 and an IPv6 address, so the code compiled
            // for the host-socket question has met both kinds (a kind first met later is a deoptimization).
            try (Rtnetlink rt = Rtnetlink.open(ns)) {
                rt.setUp("lo", true);
            }
            // The containers' namespaces, as Podman makes them for its containers.
            List<NetworkNamespace> pods = List.of(create("warm-up-pod1", made), create("warm-up-pod2", made));
            done = warmUp(ns, pods, open, commandLines, requestLog, stopping, start);
        } catch (RuntimeException | Error e) {
            RuntimeException left = removeAll(made);
            if (left != null) {
                e.addSuppressed(left); // the warm-up's own failure stays the one said
            }
            throw e;
        }
        RuntimeException left = removeAll(made);
        if (left != null) {
            throw left;
        }
        return done;
    }

    /** Removes the namespaces named {@code names}, each even when another fails; the first failure, or null. */
    private static RuntimeException removeAll(List<String> names) {
        RuntimeException first = null;
        for (String name : names) {
            try {
                NamedNamespaces.delete(name);
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        return first;
    }

    private static NetworkNamespace create(String kind, List<String> made) {
        String name = ThrowawayNamespaces.of(kind);
        NetworkNamespace ns = NamedNamespaces.create(name);
        made.add(name);
        return ns;
    }

    /**
     * The requests to the serve of {@code ns}, then the wait for the compilers. The containers go
     * to one serving of the namespace, the publishes to {@link #SERVINGS} more in turn, each with
     * a driver, sockets and threads of its own, as the serve's own are new at its first request: a
     * branch that only a new one takes (memory not read yet, a channel's first batch, a value not shared yet, a
     * thread's first scoped value) was taken by one serving's first requests only, before the
     * JIT profiled anything, so the code compiled from the profile trapped and was thrown away
     * at the serve's first request (CommitLoop.commit among it, which then took thousands of
     * requests to be compiled again). Served again, those branches are in the profile.
     */
    private static Outcome warmUp(NetworkNamespace ns, List<NetworkNamespace> pods,
                                  BiFunction<NetworkNamespace, EventLog, GatunDriver> open,
                                  CommandLineRunner commandLines, Consumer<String> requestLog,
                                  BooleanSupplier stopping, long start) {
        EventLog events = new EventLog();
        int containers;
        try (Serving serving = new Serving(ns, open, events, commandLines, requestLog)) {
            // First, while the namespace has no other network of gatun's: each round's last
            // teardown then removes gatun's table and its next first container makes it again.
            long containersEnd = start + TimeUnit.MILLISECONDS.toNanos(CONTAINERS_MILLIS);
            containers = NetavarkWarmUp.run(serving.socket(), pods.get(0), pods.get(1),
                    () -> stopping.getAsBoolean() || System.nanoTime() > containersEnd);
        }
        long containersMillis = millisSince(start);
        long publishesStart = System.nanoTime();
        int pairs = 0;
        for (int n = 0; n < SERVINGS && !stopping.getAsBoolean(); n++) {
            long servingEnd = publishesStart + TimeUnit.MILLISECONDS.toNanos(REQUESTS_MILLIS) * (n + 1) / SERVINGS;
            int servingPairs = MIN_PAIRS * (n + 1) / SERVINGS;
            try (Serving serving = new Serving(ns, open, events, commandLines, requestLog)) {
                if (n == 0) {
                    send(serving.socket(), ns, List.of("net", "create", "w1", "--subnet", SUBNET));
                }
                while ((pairs < servingPairs || System.nanoTime() < servingEnd) && !stopping.getAsBoolean()) {
                    pair(serving.socket(), ns, pairs++);
                }
            }
        }
        boolean settled = !stopping.getAsBoolean()
                && compilersSettled(publishesStart + TimeUnit.MILLISECONDS.toNanos(LIMIT_MILLIS), stopping);
        return new Outcome(pairs, containers, containersMillis, millisSince(start), settled);
    }

    /** The throwaway namespace served from this JVM as the serve serves its own: the driver and both sockets. */
    private static final class Serving implements AutoCloseable {
        private final GatunDriver driver;
        private final ApiSockets api;

        Serving(NetworkNamespace ns, BiFunction<NetworkNamespace, EventLog, GatunDriver> open, EventLog events,
                CommandLineRunner commandLines, Consumer<String> requestLog) {
            driver = open.apply(ns, events);
            try {
                api = ApiSockets.start(new Served(ns, "nftables", driver), commandLines, requestLog, events, null,
                        line -> { });
            } catch (RuntimeException | Error e) {
                driver.close();
                throw e;
            }
        }

        Path socket() {
            return api.callsSocket();
        }

        @Override
        public void close() {
            try {
                api.close();
            } finally {
                driver.close();
            }
        }
    }

    /**
     * Waits, sending nothing more, until the compilers have used at most one clock tick over
     * {@link #QUIET_NANOS} (what the requests queued for them is compiled) or until {@code deadline}; whether they did.
     */
    private static boolean compilersSettled(long deadline, BooleanSupplier stopping) {
        long windowStart = System.nanoTime();
        long windowTicks = ThreadTicks.compilers();
        while (System.nanoTime() < deadline && !stopping.getAsBoolean()) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
            long now = System.nanoTime();
            if (now - windowStart >= QUIET_NANOS) {
                long ticks = ThreadTicks.compilers();
                if (ticks >= 0 && ticks - windowTicks <= 1) {
                    return true;
                }
                windowStart = now;
                windowTicks = ticks;
            }
        }
        return false;
    }

    /**
     * The {@code i}th publish and unpublish, of one port or (every fourth) 32, on ports of its
     * own, half of them UDP, of either width (a UDP publish asks which ports untranslated UDP went
     * to, a UDP unpublish reads conntrack), every other four without {@code --owner} (the owner is
     * then the container's address, as for most command lines), and every other eight without {@code --netns} (as a host's serve
     * gets its users' commands: the serve's own namespace): a branch the warm-up never took is a
     * deoptimization at the first request that takes it. Every 25th, a listing while its ports
     * are published, every other one of them as JSON (the first {@code --json ls} of a serve
     * not warmed so took some 80 ms).
     */
    private static void pair(Path socket, NetworkNamespace ns, int i) {
        int width = i % 4 == 3 ? 32 : 1;
        int first = 20_000 + i * 32 % 30_000;
        List<String> ports = new ArrayList<>();
        String protocol = (i + i / 4) % 2 == 1 ? "/udp" : "";
        for (int p = first; p < first + width; p++) {
            ports.addAll(List.of("-p", p + ":" + p + protocol));
        }
        List<String> owner = i / 4 % 2 == 0 ? List.of("--owner", "warm-up") : List.of();
        NetworkNamespace named = i / 8 % 2 == 0 ? ns : null;
        send(socket, named, concat(concat(List.of("publish", "w1", CONTAINER_IP), owner), ports));
        if (i % 25 == 24) {
            send(socket, named, i % 50 == 49 ? List.of("--json", "ls") : List.of("ls"));
        }
        send(socket, named, concat(concat(List.of("unpublish", "w1", CONTAINER_IP), owner), ports));
    }

    /**
     * One command line for the throwaway namespace's serve, naming that namespace with --netns
     * unless {@code named} is null; a failure ends the warm-up (the serve starts without the rest).
     */
    private static void send(Path socket, NetworkNamespace named, List<String> command) {
        List<String> line = named == null ? command : concat(List.of("--netns", named.path().toString()), command);
        int code = ServeClient.runQuietly(socket, line).orElse(-1);
        if (code != 0) {
            throw new IllegalStateException("the warm-up's " + command.getFirst() + " on " + socket + " ended with "
                    + (code < 0 ? "no answer" : "exit code " + code));
        }
    }

    private static long millisSince(long start) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
