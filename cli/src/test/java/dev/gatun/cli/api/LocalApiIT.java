package dev.gatun.cli.api;

import dev.gatun.cli.service.ServeSockets;

import dev.gatun.cli.serve.ApiSockets;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.testing.RepairWitness;
import dev.gatun.cli.command.CommandLines;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.cni.PodmanCniIT;
import dev.gatun.cli.testing.GatunCli;
import dev.gatun.cli.testing.GatunServe;
import dev.gatun.driver.GatunDriver;
import dev.gatun.netlink.ReplyTimeoutException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.StandInDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * gatun serve's local API from outside, as an engine or a script uses it: curl over the unix
 * socket for the REST paths, the launcher (and so the C client) for one-shot commands, raw
 * sockets for clients that misbehave.
 */
@ExtendWith(FreshNamespaces.class)
class LocalApiIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path socketOf(NetworkNamespace ns) {
        return Path.of("/run/gatun/netns-" + ns.inode() + ".sock");
    }

    /** curl over the serve's socket: the HTTP status, then the body. */
    private record Answer(int status, String body) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }
    }

    private static JsonNode json(String body) {
        return new Answer(0, body).json();
    }

    private static Answer curl(NetworkNamespace ns, String method, String path, String body) {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--unix-socket", socketOf(ns).toString(), "-X", method,
                "-w", "\n%{http_code}"));
        if (body != null) {
            cmd.addAll(List.of("-H", "Content-Type: application/json", "--data-binary", body));
            if (body.length() > 64 * 1024) {
                // Asked first, as HTTP/1.1 lets a client: a serve refuses a body too large by its
                // length and closes, and a client still sending it would meet a broken pipe instead.
                cmd.addAll(List.of("-H", "Expect: 100-continue"));
            }
        }
        cmd.add("http://localhost" + path);
        Oracle.Result r = Oracle.run(cmd);
        assertThat(r.exitCode()).as("curl %s %s: %s", method, path, r.stderr()).isZero();
        int cut = r.stdout().lastIndexOf('\n');
        return new Answer(Integer.parseInt(r.stdout().substring(cut + 1).strip()), r.stdout().substring(0, cut));
    }

    @Test
    void restPathsAnswerWithTheClisDocumentsAndStatuses(NetworkNamespace host, NetworkNamespace c1) {
        try (GatunServe serve = GatunServe.start(host.name())) {
            Answer created = curl(host, "POST", "/v1/networks", "{\"name\": \"n1\", \"subnets\": [\"10.88.0.0/16\"]}");
            assertThat(created.status()).isEqualTo(200);
            assertThat(created.json().get("bridge").asText()).isEqualTo("gatun-n1");
            assertThat(curl(host, "GET", "/v1/networks", null).json().get(0).get("name").asText()).isEqualTo("n1");

            Answer attached = curl(host, "POST", "/v1/networks/n1/endpoints",
                    "{\"containerNetns\": \"" + c1.name() + "\", \"owner\": \"web-1\"}");
            assertThat(attached.status()).isEqualTo(200);
            assertThat(attached.json().get("ip").asText()).isEqualTo("10.88.0.2");

            Answer published = curl(host, "POST", "/v1/networks/n1/ports",
                    "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\", \"5353:53/udp\"], \"owner\": \"web-1\"}");
            assertThat(published.status()).isEqualTo(200);
            assertThat(published.json()).hasSize(2);
            Answer conflict = curl(host, "POST", "/v1/networks/n1/ports",
                    "{\"containerIp\": \"10.88.0.3\", \"ports\": [\"8080:80\"], \"owner\": \"other\"}");
            assertThat(conflict.status()).isEqualTo(409);
            assertThat(conflict.json().get("error").get("code").asInt()).isEqualTo(3);
            assertThat(conflict.json().get("error").get("message").asText()).contains("web-1");
            Answer bad = curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"70000:80\"]}");
            assertThat(bad.status()).isEqualTo(400);
            assertThat(bad.json().get("error").get("message").asText()).contains("70000");
            // A network that does not exist: 404, with the CLI's sentence and its exit code.
            Answer unknown = curl(host, "POST", "/v1/networks/nope/ports",
                    "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"]}");
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.json().get("error").get("code").asInt()).isEqualTo(2);
            assertThat(unknown.json().get("error").get("message").asText()).contains("network nope does not exist");

            assertThat(curl(host, "GET", "/v1/ports?network=n1", null).json()).hasSize(2);
            assertThat(curl(host, "GET", "/v1/ruleset", null).json().get("ruleset").asText()).startsWith("table inet gatun");
            assertThat(curl(host, "GET", "/v1/doctor", null).status()).isEqualTo(200);
            assertThat(curl(host, "DELETE", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", \"owner\": \"web-1\"}")
                    .json()).hasSize(2);
            assertThat(curl(host, "DELETE", "/v1/networks/n1/endpoints/" + c1.name(), null).status()).isEqualTo(200);
            assertThat(curl(host, "DELETE", "/v1/networks/n1", null).status()).isEqualTo(200);
            assertThat(curl(host, "GET", "/v1/networks", null).json()).isEmpty();
        }
    }

    /**
     * A host port that a socket of the host holds (a listener of this process on [::]:8080):
     * 409 naming the port and the process; "checkHostPorts": false publishes anyway; doctor
     * then reports it.
     */
    @Test
    void replaceTakesAPortFromAnotherOwnerAndDrainCountsWhatStillRunsThroughIt(NetworkNamespace host,
                                                                              NetworkNamespace c1,
                                                                              NetworkNamespace c2,
                                                                              NetworkNamespace out) throws Exception {
        PodmanCniIT.outside(host, out);
        try (GatunServe serve = GatunServe.start(host.name()); ReplyServers servers = new ReplyServers()) {
            curl(host, "POST", "/v1/networks", "{\"name\": \"n1\", \"subnets\": [\"10.88.0.0/16\"]}");
            curl(host, "POST", "/v1/networks/n1/endpoints", "{\"containerNetns\": \"" + c1.name() + "\"}");
            curl(host, "POST", "/v1/networks/n1/endpoints", "{\"containerNetns\": \"" + c2.name() + "\"}");
            servers.tcp(c2, "10.88.0.3", 80, "c2");
            try (ServerSocketChannel holder = c1.call(() -> ServerSocketChannel.open()
                    .bind(new InetSocketAddress("10.88.0.2", 80)))) {
                curl(host, "POST", "/v1/networks/n1/ports",
                        "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"owner\": \"old\"}");
                Answer refused = curl(host, "POST", "/v1/networks/n1/ports",
                        "{\"containerIp\": \"10.88.0.3\", \"ports\": [\"8080:80\"], \"owner\": \"new\"}");
                assertThat(refused.status()).as("without replace").isEqualTo(409);
                Answer loose = curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.3\", "
                        + "\"ports\": [\"8080:80\"], \"owner\": \"new\", \"keepUdpFlows\": true}");
                assertThat(loose.status()).as(loose.body()).isEqualTo(400);

                try (SocketChannel old = out.call(() -> SocketChannel.open(new InetSocketAddress(PodmanCniIT.HOST_IP, 8080)));
                     SocketChannel accepted = holder.accept()) {
                    Answer moved = curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.3\", "
                            + "\"ports\": [\"8080:80\"], \"owner\": \"new\", \"replace\": true}");
                    assertThat(moved.status()).as(moved.body()).isEqualTo(200);
                    assertThat(moved.json().get("replaced").get(0).get("owner").asText()).isEqualTo("old");
                    assertThat(moved.json().get("replaced").get(0).get("containerIp").asText()).isEqualTo("10.88.0.2");
                    assertThat(moved.json().get("published").get(0).get("owner").asText()).isEqualTo("new");
                    assertThat(ReplyServers.tcpFetch(out, PodmanCniIT.HOST_IP, 8080)).isEqualTo("c2");

                    // The old connection still runs through the mapping replaced: a drain of it counts one.
                    Answer back = curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", "
                            + "\"ports\": [\"8080:80\"], \"owner\": \"old\", \"replace\": true}");
                    assertThat(back.status()).isEqualTo(200);
                    Answer drained = curl(host, "DELETE", "/v1/networks/n1/ports",
                            "{\"containerIp\": \"10.88.0.2\", \"owner\": \"old\", \"drain\": true, \"timeoutSeconds\": 1}");
                    assertThat(drained.status()).as(drained.body()).isEqualTo(200);
                    assertThat(drained.json().get("remaining").asInt()).isEqualTo(1);
                    assertThat(drained.json().get("unpublished")).hasSize(1);
                    old.write(ByteBuffer.wrap("x".getBytes(StandardCharsets.UTF_8)));
                    ByteBuffer got = ByteBuffer.allocate(1);
                    accepted.read(got);
                    assertThat(got.array()).as("the old connection still reached the old container").containsExactly('x');
                }
                Answer none = curl(host, "DELETE", "/v1/networks/n1/ports",
                        "{\"containerIp\": \"10.88.0.3\", \"owner\": \"new\", \"drain\": true}");
                assertThat(none.json().get("remaining").asInt()).isZero();
                Answer badTimeout = curl(host, "DELETE", "/v1/networks/n1/ports",
                        "{\"containerIp\": \"10.88.0.3\", \"owner\": \"new\", \"timeoutSeconds\": 5}");
                assertThat(badTimeout.status()).as("a timeout without drain").isEqualTo(400);
            }
        }
    }

    @Test
    void aPortASocketOfTheHostHoldsIsAConflictUnlessTheCheckIsSkipped(NetworkNamespace host) throws Exception {
        try (GatunServe serve = GatunServe.start(host.name());
             ServerSocketChannel listener = host.call(() -> ServerSocketChannel.open(StandardProtocolFamily.INET6)
                     .bind(new InetSocketAddress(InetAddress.ofLiteral("::"), 8080)))) {
            assertThat(curl(host, "POST", "/v1/networks", "{\"name\": \"n1\", \"subnets\": [\"10.88.0.0/16\"]}").status())
                    .isEqualTo(200);
            Answer held = curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"]}");
            assertThat(held.status()).isEqualTo(409);
            assertThat(held.json().get("error").get("message").asText()).contains("*:8080/tcp")
                    .contains("java (pid " + ProcessHandle.current().pid() + ") listens on [::]:8080/tcp");
            assertThat(curl(host, "GET", "/v1/ports", null).json()).isEmpty();

            Answer skipped = curl(host, "POST", "/v1/networks/n1/ports",
                    "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"checkHostPorts\": false}");
            assertThat(skipped.status()).isEqualTo(200);
            boolean reported = false;
            for (JsonNode c : curl(host, "GET", "/v1/doctor", null).json()) {
                if (c.get("check").asText().equals("host port in use")) {
                    assertThat(c.get("detail").asText()).contains("*:8080/tcp").contains("java (pid");
                    reported = true;
                }
            }
            assertThat(reported).as("doctor reports the listener on the published port").isTrue();
            assertThat(listener.isOpen()).isTrue();
        }
    }

    @Test
    void badRequestsAreRefusedAndTheServeKeepsServing(NetworkNamespace host) throws Exception {
        try (GatunServe serve = GatunServe.start(host.name())) {
            Answer malformed = curl(host, "POST", "/v1/networks", "{\"name\": ");
            assertThat(malformed.status()).isEqualTo(400);
            assertThat(malformed.json().get("error").get("message").asText()).contains("not valid JSON");
            Answer unknown = curl(host, "GET", "/v1/teapot", null);
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.json().get("error").get("message").asText()).contains("/v1/teapot");
            Answer huge = curl(host, "POST", "/v1/networks", "{\"name\": \"" + "x".repeat(70_000) + "\"}");
            assertThat(huge.status()).isEqualTo(413);

            // A client that stops sending in the middle of its request holds one connection, not the serve.
            try (SocketChannel stalled = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                stalled.connect(UnixDomainSocketAddress.of(socketOf(host)));
                stalled.write(ByteBuffer.wrap(("POST /v1/networks HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"na")
                        .getBytes(StandardCharsets.US_ASCII)));
                assertThat(curl(host, "GET", "/v1/networks", null).status()).as("served meanwhile").isEqualTo(200);
                // The serve closes it after its idle timeout (10 s): reading ends then, with or without an answer.
                String rest;
                try (ExecutorService reader = Executors.newVirtualThreadPerTaskExecutor()) {
                    rest = reader.submit(() -> readToEnd(stalled)).get(30, TimeUnit.SECONDS);
                }
                assertThat(rest).as("what the stalled client got before it was cut off")
                        .satisfiesAnyOf(s -> assertThat(s).isEmpty(), s -> assertThat(s).startsWith("HTTP/1.1 4"));
            }

            // A peer that is not root: the socket is 0600 in a 0700 directory, so open both up for
            // this one check of the serve's own credential test.
            Path socket = socketOf(host);
            Oracle.run(List.of("chmod", "0755", socket.getParent().toString()));
            Oracle.run(List.of("chmod", "0666", socket.toString()));
            try {
                Oracle.Result nobody = Oracle.run(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        "curl", "-sS", "--unix-socket", socket.toString(), "-w", "\n%{http_code}", "http://localhost/v1/networks"));
                assertThat(nobody.stdout()).as(nobody.stderr()).endsWith("\n403").contains("root only");
            } finally {
                Oracle.run(List.of("chmod", "0600", socket.toString()));
                Oracle.run(List.of("chmod", "0700", socket.getParent().toString()));
            }
            assertThat(curl(host, "GET", "/v1/networks", null).status()).as("still serving").isEqualTo(200);
            assertThat(serve.isAlive()).isTrue();
        }
    }

    /**
     * A serve out of file descriptors for a while (its limit lowered to none with prlimit)
     * cannot take API connections; clients wait in the socket's queue and are answered once
     * descriptors are back, and the API keeps serving (an engine that found its plugin socket
     * dead would fail every container until the serve restarts). The first connection in the
     * shortage may still be taken (a blocked accept holds its descriptor before a client
     * comes); its request then fails with an error that names the shortage, as one that may
     * pass (503).
     */
    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES)
    void aShortageOfDescriptorsPassesAndTheApiAnswersAgain(NetworkNamespace host) throws Exception {
        try (GatunServe serve = GatunServe.start(host.name());
             ExecutorService callers = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().factory())) {
            assertThat(curl(host, "POST", "/v1/networks", "{\"name\": \"n1\", \"subnets\": [\"10.88.0.0/16\"]}").status())
                    .isEqualTo(200);
            String pid = Long.toString(serve.pid());
            Oracle.Result limits = Oracle.run(List.of("prlimit", "--pid", pid, "--nofile", "--output", "SOFT,HARD", "--noheadings"));
            assertThat(limits.exitCode()).as(limits.toString()).isZero();
            String[] softHard = limits.stdout().trim().split("\\s+");
            Future<Answer> first;
            Future<Answer> second;
            try {
                assertThat(Oracle.run(List.of("prlimit", "--pid", pid, "--nofile=0:" + softHard[1])).exitCode()).isZero();
                first = callers.submit(() -> publish(host, "8080:80"));
                Thread.sleep(1_000);
                second = callers.submit(() -> publish(host, "8081:81"));
                Thread.sleep(2_000);
                assertThat(second.isDone()).as("answered with no descriptor to take it with: %s",
                        second.isDone() ? second.get() : "").isFalse();
            } finally {
                Oracle.run(List.of("prlimit", "--pid", pid, "--nofile=" + softHard[0] + ":" + softHard[1]));
            }
            List<String> held = new ArrayList<>(List.of("8081"));
            try {
                assertThat(second.get(30, TimeUnit.SECONDS).status()).as("the caller that waited").isEqualTo(200);
                Answer early = first.get(30, TimeUnit.SECONDS);
                if (early.status() == 200) {
                    held.add("8080");
                } else {
                    assertThat(early.status()).as("taken in the shortage, a failure that may pass: %s", early.body())
                            .isEqualTo(503);
                    assertThat(early.body()).contains("EMFILE");
                }
            } catch (TimeoutException e) {
                throw new AssertionError("no answer 30 s after descriptors were back; the serve's log: " + serve.stderr(), e);
            }
            assertThat(curl(host, "GET", "/v1/ports?network=n1", null).json()).as("still serving").hasSize(held.size());
            assertThat(Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4")).contains(held);
            assertThat(serve.isAlive()).isTrue();
        }
    }

    private static Answer publish(NetworkNamespace host, String port) {
        return curl(host, "POST", "/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"" + port + "\"]}");
    }

    /**
     * A failure that may pass if tried again (here a reply the kernel never sent; also other
     * processes committing past gatun's own tries) is 503 with Retry-After on the REST paths,
     * so that an engine tries again instead of reporting a bug, while a one-shot command through
     * the same serve still exits 1 with the CLI's sentence. The driver behind this API is a
     * stand-in that fails every publish so.
     */
    @Test
    void aFailureThatMayPassIs503WithRetryAfterAndTheCliStillExits1(NetworkNamespace host) {
        GatunDriver failing = StandInDriver.answering(Map.of("publish", args -> {
            throw new ReplyTimeoutException("publish 8080/tcp", Duration.ofSeconds(5));
        }));
        try (ApiSockets api = ApiSockets.start(new Served(host, "nftables", failing), CommandLines::run, null)) {
            Oracle.Result r = Oracle.run(List.of("curl", "-sS", "-i", "--unix-socket", socketOf(host).toString(),
                    "-H", "Content-Type: application/json", "--data-binary",
                    "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"owner\": \"web-1\"}",
                    "http://localhost/v1/networks/n1/ports"));
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            String[] headAndBody = r.stdout().split("\r\n\r\n", 2);
            assertThat(headAndBody[0]).startsWith("HTTP/1.1 503").containsIgnoringCase("\r\nRetry-After: 1");
            JsonNode error = json(headAndBody[1]).get("error");
            assertThat(error.get("code").asInt()).as("the CLI's exit code").isEqualTo(1);
            assertThat(error.get("message").asText()).contains("no reply from the kernel to publish 8080/tcp");

            GatunCli.Run cli = GatunCli.run("--netns", host.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80");
            assertThat(cli.code()).as(cli.err()).isEqualTo(1);
            assertThat(cli.out()).isEmpty();
            assertThat(cli.err()).contains("no reply from the kernel to publish 8080/tcp");
        }
    }

    /**
     * Documents that cannot be obeyed, sent to a serve that owns a network with a published
     * port: every request cut short at random points, fields of the wrong type, a document
     * nested deeper than the parser takes, one over the body limit. Each is refused with its
     * status and a sentence, the kernel's ruleset and links are as they were, and the serve
     * keeps serving.
     */
    @Test
    void malformedDocumentsChangeNothingAndTheServeKeepsServing(NetworkNamespace host, NetworkNamespace c1) {
        try (GatunServe serve = GatunServe.start(host.name())) {
            assertThat(curl(host, "POST", "/v1/networks", "{\"name\": \"n1\", \"subnets\": [\"10.88.0.0/16\"]}").status())
                    .isEqualTo(200);
            assertThat(curl(host, "POST", "/v1/networks/n1/endpoints", "{\"containerNetns\": \"" + c1.name()
                    + "\", \"owner\": \"web-1\"}").status()).isEqualTo(200);
            assertThat(curl(host, "POST", "/v1/networks/n1/ports",
                    "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"8080:80\"], \"owner\": \"web-1\"}").status())
                    .isEqualTo(200);
            String ruleset = Oracle.in(host, "nft", "list", "ruleset");
            List<String> links = linkNames(host);

            Map<String, String> valid = new LinkedHashMap<>();
            valid.put("/v1/networks", "{\"name\": \"n2\", \"subnets\": [\"10.89.0.0/16\"], \"mtu\": 1400, \"icc\": false}");
            valid.put("/v1/networks/n1/endpoints", "{\"containerNetns\": \"" + c1.name() + "\", \"ifname\": \"eth1\", \"owner\": \"web-2\"}");
            valid.put("/v1/networks/n1/ports", "{\"containerIp\": \"10.88.0.2\", \"ports\": [\"9090:90\"], \"owner\": \"web-2\"}");
            Random random = new Random(20);
            List<String[]> bad = new ArrayList<>();
            for (Map.Entry<String, String> v : valid.entrySet()) {
                String doc = v.getValue();
                for (int i = 0; i < 8; i++) {
                    bad.add(new String[] {v.getKey(), doc.substring(0, random.nextInt(doc.length() - 1))});
                }
                bad.add(new String[] {v.getKey(), doc.replaceFirst(":\\s*\"[^\"]*\"", ": {\"nested\": [1, 2]}")});
                bad.add(new String[] {v.getKey(), doc.replaceFirst(":\\s*\"[^\"]*\"", ": 12")});
                bad.add(new String[] {v.getKey(), "[".repeat(5_000) + "]".repeat(5_000)});
                bad.add(new String[] {v.getKey(), doc.replaceFirst("\\}$", ", \"pad\": \"" + "x".repeat(70_000) + "\"}")});
            }
            for (String[] b : bad) {
                Answer a = curl(host, "POST", b[0], b[1]);
                String shown = b[1].length() > 200 ? b[1].substring(0, 200) + "..." : b[1];
                assertThat(a.status()).as("POST %s %s: %s", b[0], shown, a.body()).isIn(400, 413);
                if (a.status() == 400) {
                    assertThat(a.json().get("error").get("message").asText()).as(shown).isNotBlank();
                }
            }

            assertThat(Oracle.in(host, "nft", "list", "ruleset")).isEqualTo(ruleset);
            assertThat(linkNames(host)).isEqualTo(links);
            assertThat(curl(host, "GET", "/v1/ports", null).json()).hasSize(1);
            assertThat(serve.isAlive()).isTrue();
        }
    }

    /** The namespace's links by name (their state may move on by itself; which exist may not). */
    private static List<String> linkNames(NetworkNamespace ns) {
        return Oracle.in(ns, "ip", "-br", "link", "show").lines().map(l -> l.split("\\s+")[0]).sorted().toList();
    }

    private static String readToEnd(SocketChannel c) throws IOException {
        StringBuilder out = new StringBuilder();
        ByteBuffer buf = ByteBuffer.allocate(4096);
        while (c.read(buf) > 0) {
            out.append(new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII));
            buf.clear();
        }
        return out.toString();
    }

    @Test
    void aStaleSocketFallsBackAndAServeForAnotherNamespaceIsNeverUsed(NetworkNamespace a, NetworkNamespace b)
            throws Exception {
        GatunCli.ok("--netns", a.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        GatunCli.ok("--netns", b.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        GatunServe serveA = GatunServe.start(a.name(), null, "--log-requests");
        try {
            GatunCli.Run inB = GatunCli.ok("--netns", b.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80");
            assertThat(inB.out()).isEqualTo("published *:8080 -> 10.88.0.2:80/tcp (owner 10.88.0.2)\n");
            assertThat(serveA.stderr()).as("A's serve never saw B's command").doesNotContain("publish");
            assertThat(GatunCli.ok("--netns", a.name(), "--json", "ls").json()).isEmpty();

            serveA.kill();
            assertThat(socketOf(a)).as("SIGKILL leaves the socket file").exists();
            GatunCli.Run stale = GatunCli.run("--netns", a.name(), "publish", "n1", "10.88.0.2", "-p", "8080:80");
            assertThat(stale.code()).isZero();
            assertThat(stale.out()).isEqualTo("published *:8080 -> 10.88.0.2:80/tcp (owner 10.88.0.2)\n");
            assertThat(stale.err()).isEmpty();
        } finally {
            serveA.close();
        }
        assertThat(socketOf(a)).as("the fixture removes what the killed serve left").doesNotExist();
        assertThat(ServeSockets.oneShotOf(a)).as("its one-shot socket too").doesNotExist();
    }

    /**
     * Without the C client (no gcc, or a command line it does not parse) the JVM path forwards
     * to the serve itself: run beside the serve, an unpublish would be put back by its repair.
     */
    @Test
    void withoutTheCClientTheJvmPathForwardsToTheServe(NetworkNamespace host) throws Exception {
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        Map<String, String> noClient = Map.of("GATUN_NO_CLIENT", "1");
        try (GatunServe serve = GatunServe.start(host.name(), null, "--log-requests")) {
            RepairWitness witness = RepairWitness.publish(host, "n1", "10.88.255.2", 65000);
            GatunCli.Run published = GatunCli.runWith(noClient, "--netns", host.name(), "publish", "n1", "10.88.0.2",
                    "-p", "8080:80");
            assertThat(published.code()).as(published.err()).isZero();
            assertThat(published.out()).isEqualTo("published *:8080 -> 10.88.0.2:80/tcp (owner 10.88.0.2)\n");
            // A relative --netns path is not one the client forwards; the JVM path makes it absolute.
            String relative = GatunCli.ROOT.relativize(host.path().toAbsolutePath()).toString();
            GatunCli.Run unpublished = GatunCli.runWith(noClient, "--netns", relative, "unpublish", "n1", "10.88.0.2");
            assertThat(unpublished.code()).as(unpublished.err()).isZero();
            assertThat(unpublished.out()).isEqualTo("unpublished *:8080 -> 10.88.0.2:80/tcp\n");

            assertThat(serve.stderr()).as("the serve ran both")
                    .contains("ran gatun --netns " + host.name() + " publish n1 10.88.0.2 -p 8080:80: exit 0")
                    .contains("ran gatun --netns " + host.path().toAbsolutePath() + " unpublish n1 10.88.0.2: exit 0");
            // Once the serve has repaired a later removal behind its back, it has acted on this
            // one too: the removal it was told of stays removed.
            witness.awaitRepair(serve);
            assertThat(Oracle.in(host, "nft", "list", "table", "inet", "gatun")).as("nft lists gatun's table")
                    .contains("table inet gatun").doesNotContain("8080");
        }
    }

    @Test
    void aCommandForAnotherNamespaceSentToAServeIsRefused(NetworkNamespace a, NetworkNamespace b) throws Exception {
        try (GatunServe serveA = GatunServe.start(a.name(), null, "--log-requests")) {
            Path body = Files.createTempFile("gatun-cli", ".bin");
            try {
                Files.write(body, ("--netns\0" + b.name() + "\0net\0ls\0").getBytes(StandardCharsets.UTF_8));
                Oracle.Result r = Oracle.run(List.of("curl", "-sS", "--unix-socket", socketOf(a).toString(),
                        "--data-binary", "@" + body, "-w", "\n%{http_code}", "http://localhost/v1/cli"));
                assertThat(r.stdout()).endsWith("\n421").contains("not network namespace " + b.name());
            } finally {
                Files.delete(body);
            }
            assertThat(serveA.stderr()).doesNotContain("ran gatun");
        }
    }

    @Test
    void sixtyFourConcurrentClientsPublishingDifferentPortsAllSucceed(NetworkNamespace host) throws Exception {
        GatunCli.ok("--netns", host.name(), "net", "create", "n1", "--subnet", "10.88.0.0/16");
        try (GatunServe serve = GatunServe.start(host.name(), null, "--log-requests");
             ExecutorService pool = Executors.newFixedThreadPool(64)) {
            List<Future<GatunCli.Run>> runs = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                int port = 20000 + i;
                runs.add(pool.submit(() -> GatunCli.run("--netns", host.name(), "publish", "n1", "10.88.0." + (2 + port % 64),
                        "-p", port + ":80", "--owner", "client-" + port)));
            }
            for (Future<GatunCli.Run> f : runs) {
                GatunCli.Run r = Bounded.get(f, "a concurrent gatun publish");
                assertThat(r.code()).as("%s: %s", r.args(), r.err()).isZero();
            }
            assertThat(GatunCli.ok("--netns", host.name(), "--json", "ls").json()).hasSize(64);
            assertThat(serve.stderr().lines().filter(l -> l.contains("ran gatun") && l.contains("publish")).count())
                    .as("every publish went through the serve").isEqualTo(64);
        }
    }
}
