package dev.gatun.cli.api;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * SIGTERM to a {@code gatun serve} (started by the launcher) while 32 clients publish and
 * unpublish through its socket, each request exactly as the C client sends it: every request
 * the serve answered is in the kernel as answered, every one it refused or left unanswered
 * changed nothing, none is half-applied (each request covers two ports, one transaction), and
 * the serve exits 0 within two seconds, its socket removed. Ten times.
 */
@ExtendWith(FreshNamespaces.class)
class ShutdownIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int CLIENTS = 32;
    private static final int ROUNDS = 10;
    /** Port pairs a client may use in one round: far more than it gets through before the SIGTERM. */
    private static final int PAIRS = 70;
    /** The deadline from SIGTERM to the serve's exit. */
    private static final long EXIT_DEADLINE_MS = 2_000;

    private static final java.util.regex.Pattern STOP_TALLY = java.util.regex.Pattern.compile(
            "stopping; the kernel keeps every network, endpoint and port; ran (\\d+) commands? for clients, (\\d+) of them"
                    + " exited other than 0");

    /** How one request ended, as its client saw it. */
    enum Outcome { ANSWERED, REFUSED, UNANSWERED, NOT_SENT }

    /** A request: publish (or unpublish) host ports {@code port} and {@code port + 1}. */
    record Op(boolean publish, int port, Outcome outcome) {}

    @Test
    void sigtermWhileRequestsAreInFlightFinishesOrRefusesEachAndExitsZeroWithinTwoSeconds(NetworkNamespace host)
            throws Exception {
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        Path socket = ServeSockets.oneShotOf(host);
        List<String> summary = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            int base = 10_000 + round * CLIENTS * PAIRS * 2;
            List<List<Op>> ops;
            long exitMs;
            int code;
            int inFlightAtSigterm;
            GatunServe serve = GatunServe.start(host.name());
            try (ExecutorService pool = Executors.newFixedThreadPool(CLIENTS)) {
                AtomicInteger answered = new AtomicInteger();
                AtomicInteger inFlight = new AtomicInteger();
                List<Future<List<Op>>> clients = new ArrayList<>();
                for (int c = 0; c < CLIENTS; c++) {
                    int first = base + c * PAIRS * 2;
                    int client = c;
                    clients.add(pool.submit(() -> client(host, socket, client, first, answered, inFlight)));
                }
                // Until every client is going, then some more, so that SIGTERM lands among requests.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (answered.get() < 2 * CLIENTS + round * 7 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                inFlightAtSigterm = inFlight.get();
                long t0 = System.nanoTime();
                code = serve.terminate();
                exitMs = (System.nanoTime() - t0) / 1_000_000;
                ops = new ArrayList<>();
                for (Future<List<Op>> f : clients) {
                    ops.add(f.get(60, TimeUnit.SECONDS));
                }
            } finally {
                serve.close();
            }
            assertThat(code).as("round %d: exit code on SIGTERM; stderr:\n%s", round, serve.stderr()).isZero();
            assertThat(exitMs).as("round %d: ms from SIGTERM to exit", round).isLessThanOrEqualTo(EXIT_DEADLINE_MS);
            assertThat(Files.exists(socket)).as("round %d: one-shot socket left behind", round).isFalse();
            assertThat(Files.exists(ServeSockets.of(host))).as("round %d: API socket left behind", round).isFalse();
            assertThat(serve.stderr()).as("round %d: the serve's log", round)
                    .doesNotContain("Exception").doesNotContain("exit 1");

            Set<Integer> present = publishedPorts(host);
            int[] counts = new int[Outcome.values().length];
            for (List<Op> client : ops) {
                Set<Integer> wantPresent = new HashSet<>();
                for (Op op : client) {
                    counts[op.outcome.ordinal()]++;
                    boolean a = present.contains(op.port);
                    boolean b = present.contains(op.port + 1);
                    assertThat(a).as("round %d: %s half-applied (ports %d, %d: %s, %s)", round, op, op.port, op.port + 1, a, b)
                            .isEqualTo(b);
                    switch (op.outcome) {
                        case ANSWERED -> {
                            if (op.publish) {
                                wantPresent.add(op.port);
                            } else {
                                wantPresent.remove(op.port);
                            }
                        }
                        case REFUSED, UNANSWERED, NOT_SENT -> {
                            // Changed nothing: the pair is as the answered requests before it left it.
                        }
                    }
                }
                for (Op op : client) {
                    assertThat(present.contains(op.port)).as("round %d: after %s (answered requests: %s)", round, op,
                            client.stream().filter(o -> o.outcome == Outcome.ANSWERED).count())
                            .isEqualTo(wantPresent.contains(op.port));
                }
            }
            // What it says it ran when it stops: every answered request, and perhaps some it could not answer.
            java.util.regex.Matcher tally = STOP_TALLY.matcher(serve.stderr());
            assertThat(tally.find()).as("round %d: the count in its stop line; its log:\n%s", round, serve.stderr()).isTrue();
            assertThat(Long.parseLong(tally.group(1))).as("round %d: commands it says it ran", round)
                    .isBetween((long) counts[Outcome.ANSWERED.ordinal()],
                            (long) counts[Outcome.ANSWERED.ordinal()] + counts[Outcome.UNANSWERED.ordinal()]);
            assertThat(tally.group(2)).as("round %d: commands that exited other than 0", round).isEqualTo("0");
            summary.add("round " + round + ": " + exitMs + " ms to exit, " + inFlightAtSigterm + " in flight at SIGTERM, "
                    + counts[Outcome.ANSWERED.ordinal()] + " answered, " + counts[Outcome.REFUSED.ordinal()] + " refused, "
                    + counts[Outcome.UNANSWERED.ordinal()] + " unanswered, " + counts[Outcome.NOT_SENT.ordinal()] + " not sent");
            assertThat(inFlightAtSigterm).as("round %d: requests in flight at SIGTERM", round).isPositive();
        }
        System.out.println(String.join("\n", summary));
    }

    /**
     * One client: publishes a pair of ports, unpublishes it, publishes the next pair, ...; stops at
     * the first request the serve did not answer with a command's result.
     */
    private static List<Op> client(NetworkNamespace host, Path socket, int client, int first, AtomicInteger answered,
                                   AtomicInteger inFlight) {
        List<Op> ops = new ArrayList<>();
        String ip = "10.88.0." + (2 + client);
        String owner = "shutdown-" + client;
        for (int i = 0; i < 2 * PAIRS; i++) {
            boolean publish = i % 2 == 0;
            int port = first + (i / 2) * 2;
            List<String> args = new ArrayList<>(List.of("--netns", host.name(), publish ? "publish" : "unpublish", "n1", ip,
                    "-p", port + ":80", "-p", (port + 1) + ":81", "--owner", owner));
            if (publish) {
                args.add("--skip-host-port-check");
            }
            Outcome o = send(socket, args, inFlight);
            ops.add(new Op(publish, port, o));
            if (o != Outcome.ANSWERED) {
                break;
            }
            answered.incrementAndGet();
        }
        return ops;
    }

    /** A command line, as the C client sends it; an answer must be exit 0. */
    private static Outcome send(Path socket, List<String> args, AtomicInteger inFlight) {
        SocketChannel ch;
        try {
            ch = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return Outcome.NOT_SENT; // no serve listening: nothing was sent
        }
        byte[] answer;
        inFlight.incrementAndGet();
        try (ch) {
            ByteBuffer request = ByteBuffer.wrap(ServeClient.cliRequest(args));
            while (request.hasRemaining()) {
                ch.write(request);
            }
            answer = Channels.newInputStream(ch).readAllBytes();
        } catch (IOException e) {
            return Outcome.UNANSWERED;
        } finally {
            inFlight.decrementAndGet();
        }
        return switch (ServeClient.read(answer)) {
            case ServeClient.Answer.Ran ran -> {
                assertThat(ran.code()).as("%s: %s", args, ran.stderr()).isZero();
                yield Outcome.ANSWERED;
            }
            case ServeClient.Answer.Refused refused -> Outcome.REFUSED; // the client runs it itself: the serve ran nothing
            case ServeClient.Answer.Broken broken -> Outcome.UNANSWERED;
        };
    }

    /** Host ports in gatun's map ports4, read by nft. */
    private static Set<Integer> publishedPorts(NetworkNamespace host) throws IOException {
        JsonNode doc = JSON.readTree(Oracle.in(host, "nft", "-j", "list", "map", "inet", "gatun", "ports4"));
        Set<Integer> ports = new HashSet<>();
        for (JsonNode o : doc.path("nftables")) {
            for (JsonNode e : o.path("map").path("elem")) {
                ports.add(e.get(0).path("elem").path("val").path("concat").get(1).asInt());
            }
        }
        return ports;
    }
}
