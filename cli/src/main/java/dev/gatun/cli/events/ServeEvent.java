package dev.gatun.cli.events;

import java.time.Instant;
import java.util.Map;

/**
 * One thing that changed, as {@code gatun events} and {@code GET /v1/events} show it: its
 * number in this serve's log (from 1, no gaps), when, what kind ("publish", "unpublish",
 * "outside-change", "repair", "repair-failed"), who or what caused it, and the kind's details
 * (a mapping's is its {@code PortMapping}: {@code EventStream.document} makes its JSON).
 */
public record ServeEvent(long seq, Instant time, String kind, String cause, Map<String, Object> details) {

    public ServeEvent {
        details = Map.copyOf(details);
    }
}
