package dev.gatun.cli.docker;

import dev.gatun.InvalidInputException;
import dev.gatun.cli.http.UnixHttpServer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.function.ObjIntConsumer;
import java.util.concurrent.CompletableFuture;

/**
 * Serves a {@link DockerPlugin} where dockerd looks for plugins (/run/docker/plugins/NAME.sock),
 * readable and writable by root only, never on TCP.
 */
public final class PluginServer implements AutoCloseable {

    public static final Path PLUGIN_DIR = Path.of("/run/docker/plugins");
    private static final String CONTENT_TYPE = "application/vnd.docker.plugins.v1+json";
    /**
     * The largest request body taken. Docker's largest, ProgramExternalConnectivity for every
     * port of a host (65,535 bindings and as many exposed ports), is about 7 MiB.
     */
    static final int MAX_BODY = 16 * 1024 * 1024;

    private final UnixHttpServer server;

    private PluginServer(UnixHttpServer server) {
        this.server = server;
    }

    /** Where the plugin called {@code name} listens. */
    public static Path socketOf(String name) {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new InvalidInputException("plugin name '" + name
                    + "' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return PLUGIN_DIR.resolve(name + ".sock");
    }

    /** Starts serving on {@code socket}; refuses when another server answers there. */
    public static PluginServer start(DockerPlugin plugin, Path socket) {
        return start(plugin, socket, null);
    }

    /** {@link #start(DockerPlugin, Path)}, telling {@code answered} (or null) each request's path and status. */
    public static PluginServer start(DockerPlugin plugin, Path socket, ObjIntConsumer<String> answered) {
        return new PluginServer(UnixHttpServer.start(socket, "gatun-plugin", new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                DockerPlugin.Reply reply;
                if (!"POST".equals(request.getMethod())) {
                    reply = DockerPlugin.error(405, request.getMethod() + " is not allowed: Docker's plugin calls are POSTs");
                } else {
                    String body = read(request);
                    reply = body == null
                            ? DockerPlugin.error(413, "the request body is over " + MAX_BODY + " bytes")
                            : plugin.handle(path.startsWith("/") ? path.substring(1) : path, body);
                }
                response.setStatus(reply.status());
                if (answered != null) {
                    answered.accept(reply.status() == 404 ? "/other" : path, reply.status());
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
                Content.Sink.write(response, true, reply.json(), callback);
                return true;
            }
        }, null));
    }

    /**
     * The body, or null when it is over {@link #MAX_BODY} bytes (read no further than that: a
     * body of any size was once read whole into memory).
     */
    private static String read(Request request) {
        if (request.getLength() > MAX_BODY) {
            return null;
        }
        try (InputStream in = Content.Source.asInputStream(request)) {
            byte[] b = in.readNBytes(MAX_BODY + 1);
            return b.length > MAX_BODY ? null : new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    public Path socket() {
        return server.socket();
    }

    /** Stops taking requests; completes when none runs any more ({@link UnixHttpServer#shutdown}). */
    public CompletableFuture<Void> shutdown() {
        return server.shutdown();
    }

    /** Stops serving and removes the socket file; the driver's state stays as it is. */
    @Override
    public void close() {
        server.close();
    }
}
