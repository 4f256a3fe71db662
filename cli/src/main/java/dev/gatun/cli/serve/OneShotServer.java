package dev.gatun.cli.serve;

import dev.gatun.cli.wire.CommandNames;
import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeWire;
import dev.gatun.EnvironmentException;
import dev.gatun.GatunException;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.http.RootPeers;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;

/**
 * The serve's one-shot socket: the C client's command lines, CNI and netavark calls
 * ({@link ServeWire}'s framing), root only. One thread accepts each connection, reads its call
 * as the bytes come (a call that is not whole waits on the same selector, for at most {@link
 * #READ_MILLIS}) and, when it is a publish or an unpublish ({@link OneShotCalls#runsAtOnce}),
 * runs it and answers before it takes the next: a call costs no other thread's wake-up. That is
 * what this socket is for: the same call over the local API's HTTP server cost a serve just idle
 * some 0.4 ms more (measured in bench/README.md). Every other call (a CNI or netavark call, an
 * attach, a listing, a drain) and the rest of an answer the client does not take at once run on
 * a thread of their own, so none holds up the next.
 */
final class OneShotServer implements AutoCloseable {

    /** How long a call whose bytes did not all come at once may take to arrive. */
    private static final long READ_MILLIS = 10_000;
    /** How long a client may take none of its answer before the serve gives up on it. */
    private static final long WRITE_MILLIS = 10_000;
    /** How soon a connection that could not be taken (no descriptor left) is tried again. */
    private static final long RETRY_MILLIS = 100;
    /**
     * At most this many calls run aside at once (as many as the local API's pool has threads);
     * more wait their turn. Platform threads: a call that blocks in a native call (an open that
     * waits, a netlink read) would hold a virtual thread's carrier, and with it others.
     */
    private static final int ASIDE_THREADS = 64;
    private static final String STOPPING = "the serve is stopping; run the call yourself";
    /** Said in the serve's log and events: who asked. */
    static final String VIA = "gatun client";

    private final Path socket;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final OneShotCalls calls;
    private final RootPeers rootPeers;
    private final ObjIntConsumer<String> answered;
    private final Consumer<String> requestLog;
    private final Consumer<String> problems;
    private final ThreadPoolExecutor asideThreads;
    /** Calls running on threads of their own, and the accepting thread until it ends. */
    private final AtomicInteger running = new AtomicInteger(1);
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private volatile boolean stopping;
    /** Whether the last connection could not be taken: said once, and again when one is. */
    private boolean shortOfResources;

    private OneShotServer(Path socket, ServerSocketChannel server, Selector selector, OneShotCalls calls,
                          RootPeers rootPeers, ObjIntConsumer<String> answered, Consumer<String> requestLog,
                          Consumer<String> problems) {
        this.socket = socket;
        this.server = server;
        this.selector = selector;
        this.calls = calls;
        this.rootPeers = rootPeers;
        this.answered = answered;
        this.requestLog = requestLog;
        this.problems = problems;
        this.asideThreads = new ThreadPoolExecutor(ASIDE_THREADS, ASIDE_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), Thread.ofPlatform().daemon().name("gatun-call-", 0).factory());
        asideThreads.allowCoreThreadTimeOut(true);
    }

    /**
     * Serves {@code calls} on {@code socket} (mode 0600), replacing a file left there: the caller
     * holds the serve's other socket, so no other serve of the namespace runs. {@code answered}
     * and {@code requestLog} (either may be null) hear of each call as the local API's do;
     * {@code problems} of what went wrong with the socket itself.
     */
    static OneShotServer start(Path socket, OneShotCalls calls, RootPeers rootPeers, ObjIntConsumer<String> answered,
                               Consumer<String> requestLog, Consumer<String> problems) {
        ServerSocketChannel server = null;
        try {
            Files.deleteIfExists(socket);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(socket));
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
            server.configureBlocking(false);
            Selector selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
            OneShotServer s = new OneShotServer(socket, server, selector, calls, rootPeers, answered, requestLog, problems);
            Thread.ofPlatform().daemon().name("gatun-calls").start(s::accepting);
            return s;
        } catch (IOException e) {
            closeQuietly(server);
            try {
                Files.deleteIfExists(socket);
            } catch (IOException ignored) {
                // the first failure is the one to report
            }
            throw new EnvironmentException("cannot serve one-shot calls on " + socket + ": " + e.getMessage());
        }
    }

    Path socket() {
        return socket;
    }

    /**
     * The socket's one thread: takes each connection, and reads the calls that did not come
     * with their connection as their bytes arrive (a client connects, then writes: this thread
     * often wakes between the two), all on one selector.
     */
    private void accepting() {
        try {
            long untilFirstDeadline = 0;
            while (!stopping) {
                selector.select(untilFirstDeadline);
                if (stopping) {
                    break;
                }
                for (Iterator<SelectionKey> ready = selector.selectedKeys().iterator(); ready.hasNext(); ) {
                    SelectionKey key = ready.next();
                    ready.remove();
                    if (key.attachment() instanceof Incoming in) {
                        guarded((SocketChannel) key.channel(), () -> readMore(key, in));
                    } else {
                        SocketChannel c;
                        while ((c = accepted()) != null) {
                            SocketChannel taken = c;
                            guarded(c, () -> take(taken));
                        }
                    }
                }
                untilFirstDeadline = refuseLateCalls();
            }
            // The socket file is gone: what is half read or still queued gets 503 and runs nothing.
            for (SelectionKey key : selector.keys()) {
                if (key.isValid() && key.attachment() instanceof Incoming in) {
                    refuse((SocketChannel) key.channel(), in, new Refused(503, STOPPING));
                }
            }
            SocketChannel c;
            while ((c = server.accept()) != null) {
                try (SocketChannel refused = c) {
                    write(refused, null, 503, STOPPING);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            if (!stopping) {
                // Without its file, a client finds no calls socket beside a live serve and refuses to
                // run the call itself (its repair would undo it) rather than connect to nothing.
                try {
                    Files.deleteIfExists(socket);
                } catch (IOException ignored) {
                    // said below
                }
                problems.accept("the one-shot socket " + socket + " stopped taking calls: " + e
                        + "; the local API still answers; restart the serve");
            }
        } finally {
            closeQuietly(server);
            closeQuietly(selector);
            // What was handed over still runs; nothing more will be.
            asideThreads.shutdown();
            done();
        }
    }

    /** A call that broke the JVM's limits (a stack overflow, say) loses its connection, not the socket. */
    private void guarded(SocketChannel c, Runnable step) {
        try {
            step.run();
        } catch (Error e) {
            closeQuietly(c);
            problems.accept("a one-shot call failed: " + e);
        }
    }

    /**
     * Refuses the calls that did not arrive whole within {@link #READ_MILLIS} of their
     * connection; answers how long until the next one may, in milliseconds (0: none waits).
     */
    private long refuseLateCalls() {
        long now = System.nanoTime();
        long first = 0;
        for (SelectionKey key : selector.keys()) {
            if (key.isValid() && key.attachment() instanceof Incoming in) {
                long left = READ_MILLIS - (now - in.connected) / 1_000_000;
                if (left <= 0) {
                    refuse((SocketChannel) key.channel(), in, new Refused(400,
                            "the call did not arrive whole within " + READ_MILLIS / 1000 + " s"));
                } else if (first == 0 || left < first) {
                    first = left;
                }
            }
        }
        return first;
    }

    /**
     * The next connection, or null when none waits. A connection that cannot be taken for want
     * of descriptors or memory waits in the socket's queue, tried again every {@link
     * #RETRY_MILLIS}: a shortage that passes must not end the socket (the clients would find none
     * beside a live serve, and refuse to run their calls until it restarts).
     */
    private SocketChannel accepted() throws IOException {
        SocketChannel c;
        try {
            c = server.accept();
        } catch (IOException e) {
            if (!server.isOpen()) {
                throw e;
            }
            if (!shortOfResources) {
                shortOfResources = true;
                problems.accept("the one-shot socket cannot take a call (" + e.getMessage() + "); it tries again every "
                        + RETRY_MILLIS + " ms, and its callers wait");
            }
            try {
                Thread.sleep(RETRY_MILLIS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting to take a call", interrupted);
            }
            return null;
        }
        if (c != null && shortOfResources) {
            shortOfResources = false;
            problems.accept("the one-shot socket takes calls again");
        }
        return c;
    }

    /** A new connection: its call run when it came with it, else read as it comes ({@link #readMore}). */
    private void take(SocketChannel c) {
        Incoming in = new Incoming();
        try {
            if (!rootPeers.allow(c)) {
                try (c) {
                    write(c, null, 403, "one-shot calls are taken from root only");
                }
                return;
            }
            c.configureBlocking(false);
            if (in.readFrom(c)) {
                run(c, in);
            } else {
                c.register(selector, SelectionKey.OP_READ, in);
            }
        } catch (Refused e) {
            refuse(c, in, e);
        } catch (IOException | RuntimeException e) {
            failed(c, in, e);
        }
    }

    /** More of a call that did not come with its connection: run once it is whole. */
    private void readMore(SelectionKey key, Incoming in) {
        SocketChannel c = (SocketChannel) key.channel();
        try {
            if (in.readFrom(c)) {
                key.cancel();
                run(c, in);
            }
        } catch (Refused e) {
            refuse(c, in, e);
        } catch (IOException | RuntimeException e) {
            failed(c, in, e);
        }
    }

    /**
     * A whole call: run here when it is one to run at once, with its answer written here when
     * the socket takes it all at once; the rest on a thread of its own.
     */
    private void run(SocketChannel c, Incoming in) throws IOException {
        if (!runsAtOnce(in)) {
            aside(c, in, null);
            return;
        }
        ByteBuffer unsent = answer(c, in);
        if (unsent == null) {
            c.close();
        } else {
            aside(c, in, unsent);
        }
    }

    /**
     * The rest of a connection, on a thread of its own: running its call and writing its
     * answer, or (when {@code unsent} is not null) writing the part of the answer that the
     * client has not taken yet.
     */
    private void aside(SocketChannel c, Incoming in, ByteBuffer unsent) {
        running.incrementAndGet();
        asideThreads.execute(() -> {
            // Closed at the end, not as a resource: a refusal is still written on it.
            try {
                ByteBuffer rest = unsent == null ? answer(c, in) : unsent;
                if (rest != null && !finishWriting(c, rest)) {
                    problems.accept((in.kind() == null ? "one-shot call" : in.kind().path) + ": the client took none of the"
                            + " rest of its answer for " + WRITE_MILLIS / 1000 + " s; the connection is closed (the call ran)");
                }
            } catch (Refused e) {
                refuse(c, in, e);
            } catch (IOException | RuntimeException e) {
                failed(c, in, e);
            } finally {
                closeQuietly(c);
                done();
            }
        });
    }

    private static boolean runsAtOnce(Incoming in) {
        return in.kind() == ServeWire.Kind.CLI && CommandNames.runsAtOnce(in.args());
    }

    /**
     * Runs the call and writes what it printed (200), or the refusal that stopped it before it
     * ran; answers what the socket did not take at once, or null when all of it went.
     */
    private ByteBuffer answer(SocketChannel c, Incoming in) throws IOException {
        ServeWire.Printed printed;
        try {
            printed = in.kind() == ServeWire.Kind.CLI ? calls.commandLine(in.args(), VIA) : calls.run(in.kind(), in.body(), VIA);
        } catch (Served.Misdirected e) {
            refuse(c, in, new Refused(421, e.getMessage()));
            return null;
        }
        count(in, 200);
        ByteBuffer answer = ByteBuffer.wrap(ServeWire.answer(printed));
        return writeNow(c, answer) ? null : answer;
    }

    /** Writes what the socket takes without waiting; true once all of {@code b} went. */
    private static boolean writeNow(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.write(b) == 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Writes the rest of an answer as the client takes it; false when it took none for {@link
     * #WRITE_MILLIS}: a client that stopped reading (its output piped to a pager, say) loses its
     * answer and holds no thread of the serve.
     */
    private static boolean finishWriting(SocketChannel c, ByteBuffer rest) throws IOException {
        try (Selector waiting = Selector.open()) {
            c.register(waiting, SelectionKey.OP_WRITE);
            long lastTaken = System.nanoTime();
            for (int before = rest.remaining(); !writeNow(c, rest); before = rest.remaining()) {
                long now = System.nanoTime();
                if (rest.remaining() < before) {
                    lastTaken = now;
                }
                long left = WRITE_MILLIS - (now - lastTaken) / 1_000_000;
                if (left <= 0) {
                    return false;
                }
                waiting.select(left);
                waiting.selectedKeys().clear();
            }
            return true;
        }
    }

    /**
     * The client went away, or the call failed in a way its own answer does not cover: the
     * connection closes without an answer, and the client says that the call may have run.
     */
    private void failed(SocketChannel c, Incoming in, Exception e) {
        closeQuietly(c);
        if (!(e instanceof IOException)) {
            problems.accept((in.kind() == null ? "one-shot call" : in.kind().path) + " failed: " + e);
        }
    }

    private void refuse(SocketChannel c, Incoming in, Refused e) {
        try (c) {
            write(c, in, e.status(), e.getMessage());
        } catch (IOException ignored) {
            // the client went away
        }
    }

    private void write(SocketChannel c, Incoming in, int status, String why) throws IOException {
        if (requestLog != null) {
            requestLog.accept((in == null || in.kind() == null ? "one-shot call" : in.kind().path) + " " + status + " " + why);
        }
        count(in, status);
        writeAll(c, ServeWire.refusal(status, why));
    }

    private void count(Incoming in, int status) {
        if (answered != null) {
            answered.accept(in == null || in.kind() == null ? "one-shot call" : in.kind().path, status);
        }
    }

    /** Writes all of {@code bytes}, as far as the client takes them (a refusal is small: at once). */
    private static void writeAll(SocketChannel c, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (c.isBlocking()) {
            while (b.hasRemaining()) {
                c.write(b);
            }
        } else if (!writeNow(c, b) && !finishWriting(c, b)) {
            throw new IOException("the client took none of its answer for " + WRITE_MILLIS / 1000 + " s");
        }
    }

    /**
     * Begins a graceful stop: removes the socket file (a new client finds no serve and runs its
     * call itself), answers what was already queued with 503, and returns a future that completes
     * once no call runs any more.
     */
    CompletableFuture<Void> shutdown() {
        stopping = true;
        try {
            Files.deleteIfExists(socket);
        } catch (IOException ignored) {
            // close tries again
        }
        selector.wakeup();
        return drained;
    }

    /** Stops taking calls (a call still running keeps its thread) and removes the socket file. */
    @Override
    public void close() {
        shutdown();
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            throw new GatunException("cannot remove " + socket + ": " + e.getMessage(), e);
        }
    }

    private void done() {
        if (running.decrementAndGet() == 0) {
            drained.complete(null);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // nothing more to do with it
            }
        }
    }

    /** A call as it arrives ({@link ServeWire.CallReader}), and when its connection was taken. */
    private static final class Incoming {
        /** When its connection was taken: the call has {@link #READ_MILLIS} from then to arrive. */
        final long connected = System.nanoTime();
        private final ServeWire.CallReader reader = new ServeWire.CallReader(ServeWire.MAX_BODY);
        private List<String> args;

        /** Reads what is there; true once the call is whole. */
        boolean readFrom(SocketChannel c) throws IOException {
            return reader.readFrom(c);
        }

        ServeWire.Kind kind() {
            return reader.kind();
        }

        byte[] body() {
            return reader.body();
        }

        List<String> args() {
            if (args == null) {
                args = ServeWire.commandLine(body());
            }
            return args;
        }
    }
}
