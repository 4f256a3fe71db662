package dev.gatun.cli.http;

import dev.gatun.EnvironmentException;
import dev.gatun.GatunException;
import dev.gatun.driver.ConflictException;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SelectableChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.CompletableFuture;

/**
 * HTTP/1.1 on a unix socket, never on TCP: the socket file readable and writable by root only,
 * a stale one (left by a process that died) replaced, another live server refused. The Docker
 * plugin and the local API both serve through it.
 */
public final class UnixHttpServer implements AutoCloseable {

    /** How long a connection may stay silent, mid-request included, before it is closed. */
    private static final long IDLE_TIMEOUT_MILLIS = 10_000;

    /**
     * How long {@link #close} lets the thread pool's threads end once the server has stopped: the
     * requests were drained before ({@link #shutdown}), so what is left is idle threads.
     */
    private static final long THREADS_STOP_MILLIS = 200;

    /*
     * Jetty pads its contended counters by the number of object references in a cache line,
     * which it asks the JVM for through the platform MBean server unless this property says it:
     * that loads JMX (some 400 classes, about 4 MiB of a serve's memory) for one number. With
     * compressed references (any heap under 32 GiB, the serve's included) a 64-byte line holds
     * 16; the value only sizes padding, so a wrong guess costs nothing else.
     */
    static {
        System.getProperties().putIfAbsent("org.eclipse.jetty.util.referencesPerCacheLine", "16");
    }

    private final Server server;
    private final GracefulHandler graceful;
    private final Path socket;

    private UnixHttpServer(Server server, GracefulHandler graceful, Path socket) {
        this.server = server;
        this.graceful = graceful;
        this.socket = socket;
    }

    /**
     * Serves {@code handler} on {@code socket}. The socket's directory is made when missing, with
     * {@code directoryMode} ("rwx------") when that is given, as {@link Files#createDirectories} does otherwise.
     */
    public static UnixHttpServer start(Path socket, String threadName, Handler handler, String directoryMode) {
        if (Files.exists(socket)) {
            if (UnixSockets.answers(socket)) {
                throw new ConflictException("another server already answers on " + socket);
            }
            try {
                Files.delete(socket);
            } catch (IOException e) {
                throw new EnvironmentException("cannot remove the stale socket " + socket + ": " + e.getMessage());
            }
        }
        try {
            Path dir = socket.getParent();
            if (directoryMode != null && !Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(directoryMode)));
            } else {
                Files.createDirectories(dir);
            }
        } catch (IOException e) {
            throw new EnvironmentException("cannot create " + socket.getParent() + ": " + e.getMessage());
        }
        // At least two threads beside the acceptor and the selector: a request then finds one
        // waiting, also after a quiet minute (idle threads above the minimum end after 60 s),
        // instead of starting a thread, and runs the branch a serve's warm-up compiled.
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName(threadName);
        threads.setDaemon(true);
        threads.setStopTimeout(THREADS_STOP_MILLIS);
        Server server = new Server(threads);
        // The caller drains requests itself (shutdown, then close): stop does not wait again.
        server.setStopTimeout(0);
        UnixDomainServerConnector connector = new UnixDomainServerConnector(server, new BlankHostConnectionFactory());
        connector.setUnixDomainPath(socket);
        connector.setIdleTimeout(IDLE_TIMEOUT_MILLIS);
        server.addConnector(connector);
        GracefulHandler graceful = new GracefulHandler(handler);
        server.setHandler(graceful);
        try {
            server.start();
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        } catch (Exception e) {
            try {
                server.stop();
            } catch (Exception ignored) {
                // Already failing: report the first cause.
            }
            throw new GatunException("cannot serve on " + socket + ": " + e.getMessage(), e);
        }
        return new UnixHttpServer(server, graceful, socket);
    }

    /** The connection a request came on, or null if it is not a socket's (a test's, say). */
    public static SocketChannel channel(Request request) {
        EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
        return endPoint instanceof SelectableChannelEndPoint e && e.getChannel() instanceof SocketChannel channel
                ? channel : null;
    }

    public Path socket() {
        return socket;
    }

    /**
     * Begins a graceful stop: removes the socket file, so that a new client finds no server (the
     * C client then runs its command itself), and answers a request that still arrives on a
     * connection made before with 503 without running it. Returns a future that completes when
     * no request is running any more; {@link #close} then stops the server.
     */
    public CompletableFuture<Void> shutdown() {
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // close tries again
        }
        return graceful.shutdown();
    }

    /** Stops serving (a request still running loses its connection) and removes the socket file. */
    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new GatunException("stopping the server on " + socket + " failed: " + e.getMessage(), e);
        } finally {
            try {
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // Nothing else to do; a later start removes a stale socket.
            }
        }
    }
}
