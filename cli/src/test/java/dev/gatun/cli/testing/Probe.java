package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.NftJson;
import dev.gatun.testing.Oracle;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * The independent judges: real HTTP and UDP from a namespace, the real nft's listing, the real
 * ip's link list.
 */
public final class Probe {

    /** How long a container may take to start its servers: waiting, not a timing assertion. */
    public static final Duration SERVICE_START = Duration.ofSeconds(20);

    private Probe() {}

    /** GET {@code path} from {@code host:port}, opened in {@code ns}; the body of a 200 answer, else an exception. */
    public static String httpGet(NetworkNamespace ns, String host, int port, String path) throws IOException {
        try (SocketChannel c = ns.call(SocketChannel::open)) {
            c.socket().connect(new InetSocketAddress(host, port), 2000);
            c.socket().setSoTimeout(3000);
            c.socket().getOutputStream().write(("GET " + path + " HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(c.socket().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int end = answer.indexOf("\r\n\r\n");
            if (!answer.startsWith("HTTP/1.") || end < 0) {
                throw new IOException("not an HTTP answer from " + host + ":" + port + ": " + answer);
            }
            String status = answer.substring(0, answer.indexOf("\r\n"));
            if (!status.split(" ")[1].equals("200")) {
                throw new IOException(host + ":" + port + path + " answered " + status);
            }
            return answer.substring(end + 4);
        }
    }

    /**
     * Waits (up to {@link #SERVICE_START}) until GET answers with {@code expected} (stripped), for
     * a container that may still be starting; fails with the last error.
     */
    public static void awaitHttp(NetworkNamespace ns, String host, int port, String path, String expected) {
        long deadline = System.nanoTime() + SERVICE_START.toNanos();
        String last = "nothing tried";
        while (true) {
            try {
                String body = httpGet(ns, host, port, path).strip();
                if (body.equals(expected)) {
                    return;
                }
                last = "answered '" + body + "'";
            } catch (IOException | RuntimeException e) {
                last = e.toString();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("http://" + host + ":" + port + path + " from " + ns + " did not answer '"
                        + expected + "' within " + SERVICE_START.toSeconds() + " s; last: " + last);
            }
            sleep(100);
        }
    }

    /** One try, for checks that must hold right now. */
    public static String httpNow(NetworkNamespace ns, String host, int port, String path) {
        try {
            return httpGet(ns, host, port, path).strip();
        } catch (IOException | RuntimeException e) {
            throw new AssertionError("http://" + host + ":" + port + path + " from " + ns + ": " + e, e);
        }
    }

    /** Asks {@code host:port} over UDP from {@code ns} until the answer is {@code expected}, or fails. */
    public static void awaitUdp(NetworkNamespace ns, String host, int port, String expected) {
        long deadline = System.nanoTime() + SERVICE_START.toNanos();
        String last = "nothing tried";
        try (DatagramChannel c = ReplyServers.udpClient(ns)) {
            while (true) {
                try {
                    String answer = ReplyServers.udpAsk(c, host, port);
                    if (expected.equals(answer)) {
                        return;
                    }
                    last = answer == null ? "no answer" : "answered '" + answer + "'";
                } catch (IOException e) {
                    last = e.toString();
                    sleep(100); // ICMP unreachable comes back at once
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("udp " + host + ":" + port + " from " + ns + " did not answer '" + expected
                            + "' within " + SERVICE_START.toSeconds() + " s; last: " + last);
                }
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** nft's JSON listing of the namespace's ruleset, normalised ({@link NftJson}), without counter values. */
    public static JsonNode ruleset(NetworkNamespace ns) {
        JsonNode r = NftJson.ruleset(ns);
        stripCounters(r);
        return r;
    }

    private static void stripCounters(JsonNode node) {
        if (node instanceof ObjectNode o) {
            o.remove("packets");
            o.remove("bytes");
            o.forEach(Probe::stripCounters);
        } else if (node instanceof ArrayNode a) {
            a.forEach(Probe::stripCounters);
        }
    }

    /**
     * {@link #ruleset} of gatun's own tables only (those named gatun, in any family): what gatun
     * owns and repairs, without Docker's iptables-nft tables (ip filter, ip nat) beside them.
     */
    public static JsonNode gatunRuleset(NetworkNamespace ns) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode item : ruleset(ns)) {
            JsonNode inner = item.elements().hasNext() ? item.elements().next() : null;
            if (inner == null) {
                continue;
            }
            String table = item.has("table") ? inner.path("name").asText() : inner.path("table").asText();
            if ("gatun".equals(table)) {
                out.add(item);
            }
        }
        return out;
    }

    /** Every element of every set and map, one JSON text each, prefixed by "family table set: ". */
    public static List<String> elements(NetworkNamespace ns) {
        List<String> out = new ArrayList<>();
        for (JsonNode item : ruleset(ns)) {
            JsonNode set = item.has("set") ? item.get("set") : item.get("map");
            if (set == null || !set.has("elem")) {
                continue;
            }
            String where = set.path("family").asText() + " " + set.path("table").asText() + " " + set.path("name").asText() + ": ";
            for (JsonNode e : set.get("elem")) {
                out.add(where + e);
            }
        }
        return out;
    }

    /** The tables in the namespace, as "family name". */
    public static List<String> tables(NetworkNamespace ns) {
        List<String> out = new ArrayList<>();
        for (JsonNode item : ruleset(ns)) {
            if (item.has("table")) {
                out.add(item.get("table").path("family").asText() + " " + item.get("table").path("name").asText());
            }
        }
        return out;
    }

    /** Names of the links of a type (veth, bridge, ...) in the namespace, from ip -o link. */
    public static List<String> links(NetworkNamespace ns, String type) {
        List<String> names = new ArrayList<>();
        for (String l : Oracle.in(ns, "ip", "-o", "link", "show", "type", type).lines().toList()) {
            if (l.matches("^\\d+: .*")) {
                names.add(l.split(": ")[1].split("@")[0]);
            }
        }
        return names;
    }

    /** All link names in the namespace. */
    public static List<String> links(NetworkNamespace ns) {
        List<String> names = new ArrayList<>();
        for (String l : Oracle.in(ns, "ip", "-o", "link", "show").lines().toList()) {
            if (l.matches("^\\d+: .*")) {
                names.add(l.split(": ")[1].split("@")[0]);
            }
        }
        return names;
    }

    /** Polls every 50 ms until {@code condition} holds or {@code within} is over; whether it held. */
    public static boolean poll(Duration within, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            sleep(50);
        }
    }

    public static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
