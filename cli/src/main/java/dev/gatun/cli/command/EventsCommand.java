package dev.gatun.cli.command;

import dev.gatun.cli.service.ExitCode;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.EnvironmentException;
import dev.gatun.cli.api.EventStream;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.events.EventTimes;
import dev.gatun.netns.NetworkNamespace;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.io.Transport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The changes the serve of a namespace makes and sees, as they happen (or since a time). */
@Command(name = "events", mixinStandardHelpOptions = true,
        description = {"Show what the gatun serve of the namespace changes and sees, one line an event, as it happens: "
                + "each mapping published and unpublished (by any entry point: commands, the local API, Docker, CNI, "
                + "netavark) with its owner and who asked, each change another process makes to gatun's table, and "
                + "each repair with what it put back and why.",
                "Needs a running serve: the events are its own. It keeps the last 10,000 for --since."},
        footer = {"", "Examples:", "  gatun events", "  gatun events --since 10m --until now",
                "  gatun --json events --since 2026-12-02T21:00:00Z",
                "", "Times: a time ago (90s, 10m, 2h, 1d), an instant, seconds since the epoch,",
                "or now. Without --until, runs until interrupted or the serve stops.",
                "", "Exit codes: 4 when no serve runs for the namespace."})
final class EventsCommand extends Base {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Option(names = "--since", paramLabel = "TIME", description = "Also show the kept events from TIME on.")
    String since;

    @Option(names = "--until", paramLabel = "TIME", description = "Stop at TIME (now: print the kept events and exit).")
    String until;

    @Override
    public Integer call() throws Exception {
        Instant now = Instant.now();
        List<String> query = new ArrayList<>();
        // Checked here, so a bad time is a usage error before anything is asked; sent as instants.
        if (since != null) {
            query.add("since=" + URLEncoder.encode(EventTimes.parse("--since", since, now).toString(), StandardCharsets.UTF_8));
        }
        if (until != null) {
            query.add("until=" + URLEncoder.encode(EventTimes.parse("--until", until, now).toString(), StandardCharsets.UTF_8));
        }
        NetworkNamespace ns = root().host();
        Path socket = ServeSockets.of(ns);
        if (!Files.exists(socket)) {
            throw new EnvironmentException("events: no gatun serve runs for " + ns.describe() + " (no " + socket
                    + "); the events are a serve's: start one with gatun serve");
        }
        HttpClient http = new HttpClient();
        http.start();
        try {
            InputStreamResponseListener listener = new InputStreamResponseListener();
            http.newRequest(URI.create("http://localhost" + EventStream.PATH + (query.isEmpty() ? "" : "?" + String.join("&", query))))
                    .transport(new Transport.TCPUnix(socket)).idleTimeout(0, TimeUnit.MILLISECONDS).send(listener);
            Response r;
            try {
                r = listener.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                throw new EnvironmentException("events: the serve on " + socket + " does not answer (" + e.getCause()
                        + "); is it still running?");
            }
            if (r.getStatus() != 200) {
                String body = new String(listener.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                throw new EnvironmentException("events: the serve on " + socket + " answered " + r.getStatus() + ": "
                        + JSON.readTree(body).path("error").path("message").asText(body));
            }
            PrintWriter out = stdout();
            boolean json = root().json;
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    out.println(json ? line : EventLines.text(JSON.readTree(line)));
                    out.flush();
                }
            } catch (IOException e) {
                throw new EnvironmentException("events: the serve on " + socket + " went away (" + e.getMessage() + ")");
            }
        } finally {
            http.stop();
        }
        return ExitCode.OK;
    }

    /** One event as a line for people. */
    static final class EventLines {
        private EventLines() {
        }

        static String text(JsonNode e) {
            String kind = e.path("kind").asText();
            String what = switch (kind) {
                case "publish", "unpublish" -> {
                    JsonNode m = e.path("mapping");
                    yield m.path("protocol").asText() + " " + (m.path("hostIp").isNull() ? "*" : m.path("hostIp").asText())
                            + ":" + m.path("hostPort").asInt() + " -> " + m.path("containerIp").asText() + ":"
                            + m.path("containerPort").asInt() + " on " + m.path("network").asText() + ", owner "
                            + m.path("owner").asText() + " (" + e.path("cause").asText() + ")";
                }
                case "outside-change" -> e.path("what").asText() + " (by " + e.path("cause").asText() + ")";
                case "repair" -> {
                    List<String> put = new ArrayList<>();
                    e.path("repaired").forEach(l -> put.add(l.asText()));
                    yield "put back " + String.join("; ", put) + String.format(java.util.Locale.ROOT, " (after %s; %.1f ms)",
                            e.path("cause").asText(), e.path("seconds").asDouble() * 1000);
                }
                case "repair-failed" -> e.path("message").asText() + " (after " + e.path("cause").asText() + "; tried again soon)";
                case "missed" -> e.path("count").asLong() + " events missed: the serve keeps the last 10,000";
                default -> e.toString();
            };
            return (e.has("time") ? e.path("time").asText() + " " : "") + kind + " " + what;
        }
    }
}
