package dev.gatun.cli.dockerd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.io.Transport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client of dockerd's Engine API on its unix socket: the running containers, one container's
 * inspect document, and the event stream. Only what gatun reads; every failure is a
 * {@link DockerEngineException} naming the request.
 */
final class DockerEngine implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();
    /** A request other than the event stream that takes longer than this is a dockerd in trouble. */
    private static final long REQUEST_SECONDS = 30;
    /** The events gatun follows: what starts and ends a container's ports, networks made and removed, (dis)connects. */
    static final String EVENT_FILTERS = "{\"type\":[\"container\",\"network\"],"
            + "\"event\":[\"start\",\"die\",\"destroy\",\"create\",\"connect\",\"disconnect\"]}";

    private final Path socket;
    private final HttpClient http;

    private DockerEngine(Path socket, HttpClient http) {
        this.socket = socket;
        this.http = http;
    }

    /** A client of the dockerd on {@code socket}; nothing is sent yet. */
    static DockerEngine on(Path socket) {
        HttpClient http = new HttpClient();
        http.setIdleTimeout(0); // the event stream may be quiet for days
        try {
            http.start();
        } catch (Exception e) {
            throw new DockerEngineException("cannot start an HTTP client for dockerd on " + socket + ": " + e, e);
        }
        return new DockerEngine(socket, http);
    }

    /**
     * The socket of {@code dockerHost} as docker's CLI takes it ({@code unix:///var/run/docker.sock});
     * only unix sockets: the firewall of the host is programmed where dockerd runs.
     */
    static Path socketOf(String dockerHost) {
        if (!dockerHost.startsWith("unix://") || dockerHost.length() <= "unix://".length()) {
            throw new dev.gatun.InvalidInputException("docker host " + dockerHost
                    + " is not a unix socket (unix:///PATH): gatun follows the dockerd of its own host");
        }
        return Path.of(dockerHost.substring("unix://".length()));
    }

    /** dockerd's data root, asked once (empty: it gave none). */
    private Optional<Path> rootDir;

    Path socket() {
        return socket;
    }

    private Request request(String pathAndQuery) {
        return http.newRequest(URI.create("http://localhost" + pathAndQuery)).transport(new Transport.TCPUnix(socket));
    }

    /** GET {@code path}: its JSON, or null for 404 (a container gone meanwhile). */
    JsonNode get(String path) {
        ContentResponse r;
        try {
            r = request(path).timeout(REQUEST_SECONDS, TimeUnit.SECONDS).send();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DockerEngineException("GET " + path + " on " + socket + " was interrupted", e);
        } catch (TimeoutException | ExecutionException e) {
            throw new DockerEngineException("GET " + path + " on " + socket + ": " + cause(e), e);
        }
        if (r.getStatus() == 404) {
            return null;
        }
        if (r.getStatus() != 200) {
            throw new DockerEngineException("GET " + path + " on " + socket + " answered " + r.getStatus() + ": "
                    + r.getContentAsString().strip());
        }
        try {
            return JSON.readTree(r.getContent());
        } catch (IOException e) {
            throw new DockerEngineException("GET " + path + " on " + socket + " answered what is not JSON: " + e.getMessage(), e);
        }
    }

    /**
     * The host config a container was created with ({@code PortBindings}, {@code NetworkMode}),
     * read from the file dockerd writes at create in its data root
     * ({@code DockerRootDir/containers/ID/hostconfig.json}): while dockerd starts a container,
     * its inspect waits for the start to finish, and this does not. Empty when dockerd's files
     * are not readable here (another mount namespace, another layout).
     */
    Optional<JsonNode> createdHostConfig(String containerId) {
        if (!containerId.matches("[0-9a-f]{64}")) {
            return Optional.empty();
        }
        if (rootDir == null) {
            JsonNode info = get("/info");
            String root = info == null ? "" : info.path("DockerRootDir").asText("");
            rootDir = root.isEmpty() ? Optional.empty() : Optional.of(Path.of(root));
        }
        if (rootDir.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(JSON.readTree(rootDir.get().resolve("containers").resolve(containerId)
                    .resolve("hostconfig.json").toFile()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The ids of the running containers. */
    List<String> runningContainers() {
        JsonNode list = get("/containers/json");
        List<String> ids = new ArrayList<>();
        if (list != null) {
            list.forEach(c -> ids.add(c.path("Id").asText()));
        }
        return ids;
    }

    /** A container's inspect document; null when it no longer exists. */
    JsonNode inspect(String id) {
        return get("/containers/" + URLEncoder.encode(id, StandardCharsets.UTF_8) + "/json");
    }

    /**
     * The event stream from now on, one JSON document a line; dockerd holds events that come
     * while the caller reads the lists, so none is missed between the two.
     */
    Events events() {
        InputStreamResponseListener listener = new InputStreamResponseListener();
        String path = "/events?filters=" + URLEncoder.encode(EVENT_FILTERS, StandardCharsets.UTF_8);
        request(path).idleTimeout(0, TimeUnit.MILLISECONDS).send(listener);
        Response r;
        try {
            r = listener.get(REQUEST_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DockerEngineException("GET /events on " + socket + " was interrupted", e);
        } catch (TimeoutException | ExecutionException e) {
            throw new DockerEngineException("GET /events on " + socket + ": " + cause(e), e);
        }
        if (r.getStatus() != 200) {
            throw new DockerEngineException("GET /events on " + socket + " answered " + r.getStatus());
        }
        return new Events(listener.getInputStream());
    }

    /** dockerd's events, read one at a time; closing it ends the stream. */
    final class Events implements AutoCloseable {
        private final InputStream in;
        private final BufferedReader lines;

        private Events(InputStream in) {
            this.in = in;
            this.lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        }

        /** The next event; null when dockerd ended the stream. */
        JsonNode next() {
            try {
                String line;
                do {
                    line = lines.readLine();
                } while (line != null && line.isBlank());
                return line == null ? null : JSON.readTree(line);
            } catch (IOException e) {
                throw new DockerEngineException("the event stream of dockerd on " + socket + " broke: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            try {
                in.close();
            } catch (IOException e) {
                // Closing a stream that already broke: nothing more to say.
            }
        }
    }

    private static String cause(Exception e) {
        Throwable c = e.getCause() != null ? e.getCause() : e;
        return c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
    }

    @Override
    public void close() {
        try {
            http.stop();
        } catch (Exception e) {
            // Stopping the client of a dockerd that is gone: nothing more to say.
        }
    }
}
