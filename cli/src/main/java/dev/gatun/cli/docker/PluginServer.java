package dev.gatun.cli.docker;

import dev.gatun.EnvironmentException;
import dev.gatun.GatunException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Serves a {@link DockerPlugin} over HTTP/1.1 on a unix socket where dockerd looks for plugins
 * (/run/docker/plugins/NAME.sock), readable and writable by root only, never on TCP.
 */
public final class PluginServer implements AutoCloseable {

    public static final Path PLUGIN_DIR = Path.of("/run/docker/plugins");
    private static final String CONTENT_TYPE = "application/vnd.docker.plugins.v1+json";

    private final Server server;
    private final Path socket;

    private PluginServer(Server server, Path socket) {
        this.server = server;
        this.socket = socket;
    }

    /** Where the plugin called {@code name} listens. */
    public static Path socketOf(String name) {
        if (name == null || !name.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
            throw new dev.gatun.InvalidInputException("plugin name '" + name
                    + "' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return PLUGIN_DIR.resolve(name + ".sock");
    }

    /** Starts serving on {@code socket}; refuses when another server answers there. */
    public static PluginServer start(DockerPlugin plugin, Path socket) {
        if (Files.exists(socket)) {
            if (answers(socket)) {
                throw new dev.gatun.driver.ConflictException("another plugin already serves " + socket);
            }
            try {
                // A socket file left by a process that died: nobody listens on it.
                Files.delete(socket);
            } catch (IOException e) {
                throw new EnvironmentException("cannot remove the stale socket " + socket + ": " + e.getMessage());
            }
        }
        try {
            Files.createDirectories(socket.getParent());
        } catch (IOException e) {
            throw new EnvironmentException("cannot create " + socket.getParent() + ": " + e.getMessage());
        }
        QueuedThreadPool threads = new QueuedThreadPool(64, 2);
        threads.setName("gatun-plugin");
        threads.setDaemon(true);
        Server server = new Server(threads);
        UnixDomainServerConnector connector = new UnixDomainServerConnector(server, new DockerHttpConnectionFactory());
        connector.setUnixDomainPath(socket);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String path = Request.getPathInContext(request);
                DockerPlugin.Reply reply = "POST".equals(request.getMethod())
                        ? plugin.handle(path.startsWith("/") ? path.substring(1) : path, read(request))
                        : DockerPlugin.error(405, request.getMethod() + " is not allowed: Docker's plugin calls are POSTs");
                response.setStatus(reply.status());
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, CONTENT_TYPE);
                Content.Sink.write(response, true, reply.json(), callback);
                return true;
            }
        });
        try {
            server.start();
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        } catch (Exception e) {
            try {
                server.stop();
            } catch (Exception ignored) {
                // Already failing: report the first cause.
            }
            throw new GatunException("cannot serve the Docker plugin on " + socket + ": " + e.getMessage(), e);
        }
        return new PluginServer(server, socket);
    }

    private static String read(Request request) {
        try {
            return Content.Source.asString(request, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static boolean answers(Path socket) {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public Path socket() {
        return socket;
    }

    /** Stops serving and removes the socket file; the driver's state stays as it is. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new GatunException("stopping the plugin server failed: " + e.getMessage(), e);
        } finally {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // Nothing else to do; a later start removes a stale socket.
            }
        }
    }
}
