package dev.gatun.cli;

import dev.gatun.cli.testing.RepairWitness;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.wire.ServeClient;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Crash consistency (issue 20, item 2): SIGKILL at random moments, then the real nft judges.
 * The serve is killed while 32 clients publish and unpublish through it; a one-shot command
 * (the JVM path, no serve) is killed mid-change. After each kill every acknowledged change is
 * in the kernel, every change in flight is there whole or not at all, and nothing is doubled.
 */
@ExtendWith(FreshNamespaces.class)
class CrashIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CLIENTS = 32;
    /** Every CLIENTS/LAUNCHED-th client runs the real launcher (its C client); the others send raw requests as it does. */
    private static final int LAUNCHED = 8;
    private static final int SLOTS = 4;
    private static final int KILLS = Integer.getInteger("gatun.crash.kills", 100);
    private static final String NET = "n1";

    /** Host port, container port and protocol of one of a client's slots. */
    private static int hostPort(int client, int slot) {
        return 20000 + client * SLOTS + slot;
    }

    private static String protocol(int slot) {
        return slot % 2 == 0 ? "tcp" : "udp";
    }

    /** One element of gatun's map as nft lists it, in the terms the test compares. */
    private record Mapping(String protocol, int hostPort, String containerIp, int containerPort, String owner) {}

    /**
     * One client: its own container address, owner and four host ports, one request at a time.
     * What the kernel may hold of its ports is a set of possible states: one while every request
     * was answered, two (before, after) for a request that got no answer.
     */
    private static final class Client {
        final int index;
        final String ip;
        final String owner;
        final boolean launched;
        Set<Set<Integer>> possible = Set.of(Set.of());
        int acknowledged;
        int unanswered;

        Client(int index) {
            this.index = index;
            this.ip = "10.88.1." + (2 + index);
            this.owner = "c" + index;
            this.launched = index % LAUNCHED == 0;
        }

        Mapping mapping(int slot) {
            return new Mapping(protocol(slot), hostPort(index, slot), ip, 80 + slot, owner);
        }
    }

    enum Outcome { NOT_SENT, NO_ANSWER, ANSWERED }

    /** {@code text} is what the command printed (stdout, then stderr), or why there is no answer. */
    private record Reply(Outcome outcome, int exitCode, String stdout, String text) {
        Reply(Outcome outcome, String why) {
            this(outcome, -1, "", why);
        }
    }

    /** A command line exactly as the C client sends it, on the serve's one-shot socket. */
    private static Reply served(Path socket, List<String> argv) {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                c.connect(UnixDomainSocketAddress.of(socket));
                ByteBuffer out = ByteBuffer.wrap(ServeClient.cliRequest(argv));
                while (out.hasRemaining()) {
                    c.write(out);
                }
            } catch (IOException e) {
                return new Reply(Outcome.NOT_SENT, e.toString()); // the request never reached a serve whole
            }
            ByteArrayOutputStream in = new ByteArrayOutputStream();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            try {
                while (c.read(buf) > 0) {
                    in.write(buf.array(), 0, buf.position());
                    buf.clear();
                }
            } catch (IOException e) {
                return new Reply(Outcome.NO_ANSWER, e.toString());
            }
            return switch (ServeClient.read(in.toByteArray())) {
                case ServeClient.Answer.Ran ran -> new Reply(Outcome.ANSWERED, ran.code(), ran.stdout(), ran.stdout() + ran.stderr());
                case ServeClient.Answer.Refused refused -> new Reply(Outcome.NO_ANSWER, refused.status() + " " + refused.why());
                case ServeClient.Answer.Broken broken -> new Reply(Outcome.NO_ANSWER, "an answer cut off or not understood");
            };
        } catch (IOException e) {
            return new Reply(Outcome.NOT_SENT, e.toString());
        }
    }

    /** The launcher, as a person runs it: the C client, or the JVM path when no serve answers. */
    private static Reply launched(List<String> argv) {
        GatunCli.Run r = GatunCli.run(argv.toArray(String[]::new));
        if (r.code() == 1 && r.err().contains("stopped answering")) {
            return new Reply(Outcome.NO_ANSWER, r.err());
        }
        return new Reply(Outcome.ANSWERED, r.code(), r.out(), r.out() + r.err());
    }

    /** gatun's map elements as the real nft lists them. */
    private static List<Mapping> kernelMappings(NetworkNamespace ns) throws IOException {
        List<Mapping> all = new ArrayList<>();
        JsonNode root = JSON.readTree(Oracle.in(ns, "nft", "-j", "list", "table", "inet", "gatun"));
        for (JsonNode item : root.path("nftables")) {
            String map = item.path("map").path("name").asText(null);
            for (JsonNode pair : item.path("map").path("elem")) {
                JsonNode key = pair.get(0);
                String owner = key.path("elem").path("comment").asText(null);
                JsonNode keyParts = key.has("elem") ? key.path("elem").path("val").path("concat") : key.path("concat");
                JsonNode value = pair.get(1).path("concat");
                if (!map.equals("ports4")) {
                    throw new AssertionError("an element in map " + map + ", which the test never publishes to: " + pair);
                }
                all.add(new Mapping(keyParts.get(0).asText(), keyParts.get(1).asInt(), value.get(0).asText(),
                        value.get(1).asInt(), owner));
            }
        }
        return all;
    }

    private static List<String> publish(NetworkNamespace ns, Client c, Set<Integer> slots) {
        List<String> argv = new ArrayList<>(List.of("--netns", ns.name(), "publish", NET, c.ip));
        for (int slot : slots) {
            argv.addAll(List.of("-p", hostPort(c.index, slot) + ":" + (80 + slot) + "/" + protocol(slot)));
        }
        argv.addAll(List.of("--owner", c.owner));
        return argv;
    }

    private static List<String> unpublish(NetworkNamespace ns, Client c) {
        return List.of("--netns", ns.name(), "unpublish", NET, c.ip, "--owner", c.owner);
    }

    private static Set<Integer> union(Set<Integer> a, Set<Integer> b) {
        Set<Integer> u = new TreeSet<>(a);
        u.addAll(b);
        return Set.copyOf(u);
    }

    /**
     * One request of client {@code c}; updates what the kernel may hold of its ports. Runs under
     * the read lock of {@code pause}, so the checker sees no request in flight. Returns whether
     * the request was acknowledged.
     */
    private static boolean step(NetworkNamespace ns, Path socket, Client c, List<String> errors) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        boolean publishing = random.nextInt(5) < 3;
        Set<Integer> slots = new TreeSet<>();
        if (publishing) {
            while (slots.isEmpty()) {
                for (int s = 0; s < SLOTS; s++) {
                    if (random.nextBoolean()) {
                        slots.add(s);
                    }
                }
            }
        }
        List<String> argv = publishing ? publish(ns, c, slots) : unpublish(ns, c);
        Reply r = c.launched ? launched(argv) : served(socket, argv);
        Set<Set<Integer>> after = new HashSet<>();
        for (Set<Integer> p : c.possible) {
            after.add(publishing ? union(p, slots) : Set.of());
        }
        switch (r.outcome()) {
            case NOT_SENT -> {
                try {
                    Thread.sleep(5); // the serve is gone; the checker is about to pause everyone
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            case NO_ANSWER -> {
                c.unanswered++;
                if (Boolean.getBoolean("gatun.crash.debug")) {
                    System.out.println("no answer to " + argv + ": " + r.text());
                }
                Set<Set<Integer>> either = new HashSet<>(c.possible);
                either.addAll(after);
                c.possible = Set.copyOf(either);
            }
            case ANSWERED -> {
                if (r.exitCode() != 0) {
                    synchronized (errors) {
                        errors.add("gatun " + String.join(" ", argv) + " exited " + r.exitCode() + ": " + r.text());
                    }
                    Set<Set<Integer>> either = new HashSet<>(c.possible);
                    either.addAll(after);
                    c.possible = Set.copyOf(either);
                } else {
                    c.acknowledged++;
                    c.possible = Set.copyOf(after);
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Compares the kernel with every client's possible states; narrows each to what the kernel
     * holds. Returns the mappings found.
     */
    private static Set<Mapping> check(NetworkNamespace ns, List<Client> clients, int cycle) throws IOException {
        List<Mapping> found = kernelMappings(ns);
        assertNoneTwice(found.stream().map(m -> m.protocol() + "/" + m.hostPort()).toList(),
                "cycle " + cycle + ": host ports nft lists");
        Map<Integer, Set<Integer>> held = new TreeMap<>();
        Set<Mapping> expectedShape = new HashSet<>();
        for (Client c : clients) {
            held.put(c.index, new TreeSet<>());
            for (int s = 0; s < SLOTS; s++) {
                expectedShape.add(c.mapping(s));
            }
        }
        for (Mapping m : found) {
            assertThat(expectedShape).as("cycle %d: %s is one the clients published, as they published it", cycle, m)
                    .contains(m);
            int client = (m.hostPort() - 20000) / SLOTS;
            held.get(client).add((m.hostPort() - 20000) % SLOTS);
        }
        for (Client c : clients) {
            Set<Integer> actual = Set.copyOf(held.get(c.index));
            assertThat(c.possible).as("cycle %d, client %s: the kernel holds slots %s; acknowledged or whole "
                    + "in-flight changes allow only these", cycle, c.owner, actual).contains(actual);
            c.possible = Set.of(actual);
        }
        return Set.copyOf(found);
    }

    /** Fails when a listing names one thing twice: what a doubled change would leave. */
    private static void assertNoneTwice(List<?> listed, String what) {
        assertThat(listed).as("%s, none twice", what).doesNotHaveDuplicates();
    }

    /** The serve's own `ls`, in the test's terms, listing no mapping twice. */
    private static Set<Mapping> servedLs(NetworkNamespace ns, Path socket) throws IOException {
        Reply r = served(socket, List.of("--netns", ns.name(), "--json", "ls"));
        assertThat(r.outcome()).as(r.text()).isEqualTo(Outcome.ANSWERED);
        assertThat(r.exitCode()).as(r.text()).isZero();
        List<Mapping> out = new ArrayList<>();
        for (JsonNode m : JSON.readTree(r.stdout())) {
            assertThat(m.path("hostIp").isNull()).as("%s", m).isTrue();
            out.add(new Mapping(m.path("protocol").asText(), m.path("hostPort").asInt(), m.path("containerIp").asText(),
                    m.path("containerPort").asInt(), m.path("owner").asText()));
        }
        assertNoneTwice(out, "the serve's ls");
        return Set.copyOf(out);
    }

    /** What a healthy serve never logs. */
    private static void assertCleanLog(GatunServe serve, int cycle) {
        assertCleanLog(serve.stderr(), cycle);
    }

    private static void assertCleanLog(String log, int cycle) {
        assertThat(log).as("cycle %d: the serve's log", cycle)
                .doesNotContainIgnoringCase("fail").doesNotContainIgnoringCase("exception")
                .doesNotContainIgnoringCase("error").doesNotContain("repaired");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    void aServeKilledAtRandomMomentsLosesNoAcknowledgedChange(NetworkNamespace host) throws Exception {
        GatunCli.ok("--netns", host.name(), "net", "create", NET, "--subnet", "10.88.0.0/16");
        Path socket = ServeSockets.oneShotOf(host);
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(new Client(i));
        }
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        // Clients run a request under the read lock; the checker takes the write lock, so it
        // waits for every request in flight to end and no new one starts until it lets go.
        ReentrantReadWriteLock pause = new ReentrantReadWriteLock();
        pause.writeLock().lock();
        AtomicInteger running = new AtomicInteger(1);
        // Set just before a kill: no request starts after it (a launched one would find no serve
        // and take the JVM path, seconds here), every one under way runs on into the kill.
        AtomicBoolean killing = new AtomicBoolean();
        AtomicInteger acks = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (Client c : clients) {
            threads.add(Thread.ofPlatform().name("crash-client-" + c.index).start(() -> {
                while (running.get() == 1) {
                    while (killing.get() && running.get() == 1) {
                        LockSupport.parkNanos(1_000_000);
                    }
                    pause.readLock().lock();
                    try {
                        if (running.get() == 1) {
                            if (step(host, socket, c, errors)) {
                                acks.incrementAndGet();
                            }
                        }
                    } finally {
                        pause.readLock().unlock();
                    }
                }
            }));
        }
        long started = System.nanoTime();
        int killedWithUnanswered = 0;
        try {
            for (int cycle = 1; cycle <= KILLS; cycle++) {
                long t0 = System.nanoTime();
                try (GatunServe serve = GatunServe.start(host.name())) {
                    long t1 = System.nanoTime();
                    // The restarted serve read the kernel and converged: its ls is the kernel's.
                    assertThat(servedLs(host, socket)).as("cycle %d: the serve's ls", cycle).isEqualTo(check(host, clients, cycle));
                    int unansweredBefore = clients.stream().mapToInt(c -> c.unanswered).sum();
                    int acksBefore = acks.get();
                    long t2 = System.nanoTime();
                    killing.set(false);
                    pause.writeLock().unlock();
                    long t3;
                    try {
                        // Mostly once the serve answers (its first answers take a while: a JVM
                        // that has just started), sometimes before: a kill at any moment.
                        if (ThreadLocalRandom.current().nextInt(5) > 0) {
                            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                            while (acks.get() == acksBefore && System.nanoTime() < deadline) {
                                Thread.sleep(2);
                            }
                        }
                        Thread.sleep(ThreadLocalRandom.current().nextInt(0, 300));
                        killing.set(true);
                        serve.kill();
                        t3 = System.nanoTime();
                    } finally {
                        pause.writeLock().lock();
                    }
                    if (Boolean.getBoolean("gatun.crash.debug")) {
                        System.out.printf("cycle %d: start %d ms, check %d ms, run %d ms, drain %d ms%n", cycle,
                                (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, (t3 - t2) / 1_000_000, (System.nanoTime() - t3) / 1_000_000);
                    }
                    assertCleanLog(serve, cycle);
                    if (clients.stream().mapToInt(c -> c.unanswered).sum() > unansweredBefore) {
                        killedWithUnanswered++;
                    }
                }
                check(host, clients, cycle);
                assertThat(errors).as("cycle %d: requests that failed", cycle).isEmpty();
            }
            try (GatunServe serve = GatunServe.start(host.name())) {
                Set<Mapping> kernel = check(host, clients, KILLS + 1);
                assertThat(servedLs(host, socket)).as("the last serve's ls").isEqualTo(kernel);
                Reply doctor = served(socket, List.of("--netns", host.name(), "doctor"));
                assertThat(doctor.exitCode()).as(doctor.text()).isZero();
                assertThat(doctor.text()).contains("gatun-n1");
                assertThat(serve.terminate()).isZero();
                assertCleanLog(serve, KILLS + 1);
            }
        } finally {
            running.set(0);
            pause.writeLock().unlock();
            for (Thread t : threads) {
                t.join(TimeUnit.MINUTES.toMillis(3));
            }
            Files.deleteIfExists(socket);
            Files.deleteIfExists(ServeSockets.of(host));
        }
        int acknowledged = clients.stream().mapToInt(c -> c.acknowledged).sum();
        int unanswered = clients.stream().mapToInt(c -> c.unanswered).sum();
        System.out.printf("crash: %d kills in %d s, %d acknowledged requests, %d left unanswered by a kill, "
                        + "%d kills with a request in flight%n", KILLS, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started),
                acknowledged, unanswered, killedWithUnanswered);
        assertThat(acknowledged).as("the clients kept the serve busy").isGreaterThanOrEqualTo(KILLS / 2);
        // What the test is for: kills that cut requests short, sent and never answered.
        assertThat(killedWithUnanswered).as("kills with a request in flight, of %d", KILLS).isGreaterThanOrEqualTo(KILLS / 2);
        assertThat(errors).isEmpty();
    }

    /** Each of the lanes killing one-shot commands side by side: 8 ports of its own, published and unpublished whole. */
    private static final int LANES = 2;
    private static final int LANE_PORTS = 8;

    private static List<String> oneShot(NetworkNamespace ns, int lane, boolean publishing) {
        String ip = "10.88.2." + (2 + lane);
        List<String> argv = new ArrayList<>(List.of("--netns", ns.name(), publishing ? "publish" : "unpublish", NET, ip));
        if (publishing) {
            for (int i = 0; i < LANE_PORTS; i++) {
                argv.addAll(List.of("-p", (30000 + lane * LANE_PORTS + i) + ":" + (80 + i) + "/" + (i % 2 == 0 ? "tcp" : "udp")));
            }
        }
        argv.addAll(List.of("--owner", "lane" + lane));
        return argv;
    }

    /** How many of the lane's ports the kernel holds, each exactly as the lane publishes it. */
    private static int lanePorts(NetworkNamespace ns, int lane) throws IOException {
        int n = 0;
        for (Mapping m : kernelMappings(ns)) {
            if (m.owner().equals("lane" + lane)) {
                int i = m.hostPort() - 30000 - lane * LANE_PORTS;
                assertThat(m).isEqualTo(new Mapping(i % 2 == 0 ? "tcp" : "udp", m.hostPort(), "10.88.2." + (2 + lane),
                        80 + i, "lane" + lane));
                n++;
            }
        }
        return n;
    }

    /** Runs the launcher with no serve (so the JVM path) and SIGKILLs it after {@code killAfterMillis}; the exit code, or -1 when killed. */
    private static int runAndKill(List<String> argv, long killAfterMillis) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(GatunCli.ROOT.resolve("gatun").toString()));
        cmd.addAll(argv);
        Process p = new ProcessBuilder(cmd).directory(GatunCli.ROOT.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        p.getOutputStream().close();
        if (p.waitFor(killAfterMillis, TimeUnit.MILLISECONDS)) {
            return p.exitValue();
        }
        // The launcher execs the client, the client the launcher again, that java: one pid throughout.
        List<ProcessHandle> children = p.descendants().toList();
        p.destroyForcibly();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s died of SIGKILL", argv).isTrue();
        for (ProcessHandle child : children) {
            child.onExit().get(60, TimeUnit.SECONDS); // a tool it ran, left to finish
        }
        return -1;
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES)
    void aOneShotCommandKilledMidChangeLeavesAllOrNothing(NetworkNamespace host) throws Exception {
        GatunCli.ok("--netns", host.name(), "net", "create", NET, "--subnet", "10.88.0.0/16");
        // How long a whole command takes here and now: the kills fall anywhere within it.
        long full = 0;
        for (boolean publishing : List.of(true, false)) {
            long t0 = System.nanoTime();
            assertThat(runAndKill(oneShot(host, 0, publishing), TimeUnit.MINUTES.toMillis(2))).isZero();
            full = Math.max(full, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        }
        long window = full + full / 5;
        int[] whole = new int[LANES];
        int[] none = new int[LANES];
        int[] finished = new int[LANES];
        List<Thread> lanes = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        long started = System.nanoTime();
        for (int l = 0; l < LANES; l++) {
            int lane = l;
            lanes.add(Thread.ofPlatform().start(() -> {
                try {
                    boolean present = false;
                    for (int k = 0; k < KILLS / LANES; k++) {
                        boolean publishing = !present;
                        int code = runAndKill(oneShot(host, lane, publishing), ThreadLocalRandom.current().nextLong(window));
                        int held = lanePorts(host, lane);
                        assertThat(held).as("lane %d, %s: all %d ports or none", lane, publishing ? "publish" : "unpublish",
                                LANE_PORTS).isIn(0, LANE_PORTS);
                        if (code >= 0) {
                            assertThat(code).as("lane %d: a command that was not killed succeeds", lane).isZero();
                            assertThat(held).as("lane %d: what the acknowledged command did", lane)
                                    .isEqualTo(publishing ? LANE_PORTS : 0);
                            finished[lane]++;
                        }
                        present = held == LANE_PORTS;
                        if (present == publishing) {
                            whole[lane]++;
                        } else {
                            none[lane]++;
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        for (Thread t : lanes) {
            Bounded.join(t, "a client lane");
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("a lane failed: " + failures.getFirst().getMessage(), failures.getFirst());
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
        System.out.printf("one-shot kills: %d in %d s (a whole command took %d ms): %d left the whole change, %d none, "
                        + "%d finished before the kill%n", LANES * (KILLS / LANES),
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), full,
                Arrays.stream(whole).sum(), Arrays.stream(none).sum(), Arrays.stream(finished).sum());
        // A later command finds what a killed one left and works on: nothing half-made blocks it.
        GatunCli.ok("--netns", host.name(), "unpublish", NET, "10.88.2.2", "--owner", "lane0");
        assertThat(lanePorts(host, 0)).isZero();
    }

    /**
     * A serve (re)started while one-shot commands run in JVMs of their own, as after a crash:
     * it reads the kernel when it starts and puts back what others remove from then on, so an
     * unpublish that found no serve and committed after that read would be undone after it
     * reported success. The serve starts at a random moment of the command's run each time.
     */
    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void aServeStartingBesideOneShotCommandsUndoesNoneOfThem(NetworkNamespace host) throws Exception {
        String ns = host.name();
        GatunCli.ok("--netns", ns, "net", "create", NET, "--subnet", "10.88.0.0/16");
        List<String> publish = List.of("--netns", ns, "publish", NET, "10.88.3.2", "-p", "40000:80", "--owner", "x");
        List<String> unpublish = List.of("--netns", ns, "unpublish", NET, "10.88.3.2", "--owner", "x");
        RepairWitness witness = RepairWitness.publish(host, NET, "10.88.255.2", 65000); // no serve runs: a JVM
        long t0 = System.nanoTime();
        try (GatunServe first = GatunServe.start(ns)) {
            assertThat(first.isAlive()).isTrue();
        }
        long serveStart = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        int rounds = Integer.getInteger("gatun.crash.startRaces", 10);
        for (int round = 1; round <= rounds; round++) {
            GatunCli.ok(publish.toArray(String[]::new)); // no serve runs: a JVM
            CompletableFuture<GatunServe> serve = CompletableFuture.supplyAsync(() -> GatunServe.start(ns));
            Thread.sleep(ThreadLocalRandom.current().nextLong(serveStart));
            GatunCli.Run r = GatunCli.run(unpublish.toArray(String[]::new));
            try (GatunServe s = serve.get(5, TimeUnit.MINUTES)) {
                assertThat(r.code()).as("round %d: %s", round, r.err()).isZero();
                // Once the serve has repaired a later removal behind its back, it has acted on
                // the unpublish too: had it taken it for damage, x would be back.
                witness.awaitRepair(s);
                assertThat(kernelMappings(host)).as("round %d: the acknowledged unpublish stays done; serve's log:%n%s",
                        round, s.stderr()).noneMatch(m -> m.owner().equals("x"));
                assertCleanLog(RepairWitness.withoutSentinel(s.stderr()), round);
            }
        }
        System.out.printf("start races: %d rounds, serve start %d ms%n", rounds, serveStart);
    }
}
