package dev.gatun.cli.api;

import dev.gatun.cli.wire.Refused;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.InvalidInputException;
import dev.gatun.cli.json.Json;
import dev.gatun.cli.events.EventLog;
import dev.gatun.cli.events.EventTimes;
import dev.gatun.cli.events.ServeEvent;
import dev.gatun.driver.PortMapping;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code GET /v1/events[?since=T][&until=T]}: the serve's changes as JSON lines, one event a
 * line, each written as it happens. Without {@code since}, only what happens from now on;
 * without {@code until}, until the client goes or the serve stops. A reader that fell behind
 * the log's memory gets a line {@code {"kind":"missed","count":N}} in place of what it lost.
 */
public final class EventStream {

    public static final String PATH = "/v1/events";

    /** How long a quiet stream waits before it looks at the time again (for until, for the serve's stop). */
    private static final Duration POLL = Duration.ofSeconds(1);

    private static final ObjectMapper JSON = new ObjectMapper();

    private EventStream() {
    }

    /** Checks the query and answers on a thread of its own; handle() returns at once. */
    static void start(EventLog events, Map<String, String> query, Request request, Response response, Callback callback) {
        for (String name : query.keySet()) {
            if (!name.equals("since") && !name.equals("until")) {
                throw new Refused(400, "GET " + PATH + ": unknown query parameter " + name
                        + " (known: since, until)");
            }
        }
        Instant now = Instant.now();
        Instant since;
        Instant until;
        try {
            since = query.containsKey("since") ? EventTimes.parse("since", query.get("since"), now) : null;
            until = query.containsKey("until") ? EventTimes.parse("until", query.get("until"), now) : null;
        } catch (InvalidInputException e) {
            throw new Refused(400, "GET " + PATH + ": " + e.getMessage());
        }
        // A stream is quiet for as long as nothing changes: the connection's idle timeout does not apply.
        request.getConnectionMetaData().getConnection().getEndPoint().setIdleTimeout(0);
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/x-ndjson");
        long from = since == null ? events.last() : 0;
        Thread.ofVirtual().name("gatun-events").start(() -> stream(events, from, since, until, response, callback));
    }

    private static void stream(EventLog events, long after, Instant since, Instant until, Response response,
                               Callback callback) {
        try {
            write(response, new byte[0]); // the head now: a client sees the stream is open before the first event
            long last = after;
            boolean first = true;
            while (true) {
                Duration wait = POLL;
                if (until != null) {
                    Duration left = Duration.between(Instant.now(), until);
                    wait = left.isNegative() ? Duration.ZERO : left.compareTo(POLL) < 0 ? left : POLL;
                }
                EventLog.Batch b = events.after(last, first ? since : null, wait);
                first = false;
                if (b.missed() > 0) {
                    write(response, line(Map.of("kind", "missed", "count", b.missed())));
                }
                for (ServeEvent e : b.events()) {
                    if (until != null && e.time().isAfter(until)) {
                        response.write(true, ByteBuffer.allocate(0), callback);
                        return;
                    }
                    write(response, line(document(e)));
                    last = e.seq();
                }
                last = Math.max(last, b.last()); // those before since were looked at too
                if (b.closed() || until != null && !Instant.now().isBefore(until)) {
                    response.write(true, ByteBuffer.allocate(0), callback);
                    return;
                }
            }
        } catch (InterruptedException e) {
            callback.failed(e);
        } catch (Exception e) {
            callback.failed(e); // the client went away
        }
    }

    /** The JSON document of an event, as the API and gatun events --json show it. */
    public static Map<String, Object> document(ServeEvent e) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("seq", e.seq());
        d.put("time", e.time().toString());
        d.put("kind", e.kind());
        d.put("cause", e.cause());
        new java.util.TreeMap<>(e.details()).forEach((k, v) -> d.put(k, v instanceof PortMapping m ? Json.mapping(m) : v));
        return d;
    }

    private static byte[] line(Map<String, Object> document) throws JsonProcessingException {
        return (JSON.writeValueAsString(document) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static void write(Response response, byte[] bytes) throws Exception {
        Callback.Completable done = new Callback.Completable();
        response.write(false, ByteBuffer.wrap(bytes), done);
        done.get();
    }
}
