package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * A host port handed between two containers, a and b, while a client opens new connections to
 * it all the time: each connection must be answered, by the container that owned the port when
 * it was opened, and one connection opened before the first handoff must stay with a. Whoever
 * hands the port over (the library, the CLI, the local API) is given as a callback.
 */
public final class Handoff {

    private Handoff() {}

    /** What the client saw: connections answered, every failure or wrong answer, the kept connection's answers. */
    public record Outcome(int answered, List<String> wrong, List<String> keptAnswers) {}

    /**
     * While a client in {@code outside} opens a new connection to {@code address:port} every 5 ms,
     * calls {@code handOff} with 1 to {@code times} (odd: the port goes to b, even: back to a), one
     * every {@code pauseMs}; the port must be a's when this starts.
     */
    public static Outcome run(NetworkNamespace outside, String address, int port, int times, long pauseMs,
                              IntConsumer handOff) throws IOException {
        try (Kept kept = Kept.open(outside, address, port)) {
            List<String> keptAnswers = new ArrayList<>();
            keptAnswers.add(kept.ask());
            // Version v of the port: a's when v is even. Handoffs started and finished, to judge each answer by.
            AtomicInteger started = new AtomicInteger();
            AtomicInteger finished = new AtomicInteger();
            AtomicInteger answered = new AtomicInteger();
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            AtomicBoolean done = new AtomicBoolean();
            CompletableFuture<Void> client = CompletableFuture.runAsync(() -> outside.run(() -> {
                while (!done.get()) {
                    int before = finished.get();
                    String said;
                    try {
                        said = ask(address, port);
                    } catch (IOException e) {
                        wrong.add("connection failed: " + e);
                        continue;
                    }
                    int after = started.get();
                    answered.incrementAndGet();
                    boolean mayBeA = before % 2 == 0 || after > before;
                    boolean mayBeB = before % 2 == 1 || after > before;
                    if (!(said.equals("a") && mayBeA) && !(said.equals("b") && mayBeB)) {
                        wrong.add(said + " answered between versions " + before + " and " + after);
                    }
                    pause(5);
                }
            }));
            try {
                for (int i = 1; i <= times; i++) {
                    pause(pauseMs);
                    started.incrementAndGet();
                    handOff.accept(i);
                    finished.incrementAndGet();
                    keptAnswers.add(kept.ask());
                }
                pause(pauseMs);
            } finally {
                done.set(true);
            }
            Bounded.get(client, "the outside client");
            return new Outcome(answered.get(), List.copyOf(wrong), keptAnswers);
        }
    }

    /** One short connection: a line sent, the line answered. */
    public static String ask(String address, int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), 2000);
            s.setSoTimeout(2000);
            s.getOutputStream().write("hi\n".getBytes(StandardCharsets.UTF_8));
            String line = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
            if (line == null) {
                throw new IOException("closed without an answer");
            }
            return line;
        }
    }

    /** A connection kept open, asked a line now and then. */
    public record Kept(Socket socket, BufferedReader in, OutputStream out) implements Closeable {
        public static Kept open(NetworkNamespace ns, String address, int port) {
            return ns.call(() -> {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(address, port), 2000);
                s.setSoTimeout(2000);
                return new Kept(s, new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)),
                        s.getOutputStream());
            });
        }

        public String ask() throws IOException {
            out.write("hi\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            return in.readLine();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** TCP servers in containers answering each line of each connection with a name. */
    public static final class LineServers implements Closeable {
        private final List<ServerSocket> sockets = new ArrayList<>();

        public LineServers start(NetworkNamespace ns, InetAddress address, int port, String name) {
            ServerSocket server = ns.call(() -> {
                ServerSocket s = new ServerSocket();
                s.setReuseAddress(true);
                s.bind(new InetSocketAddress(address, port), 512);
                return s;
            });
            sockets.add(server);
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket c = server.accept();
                        Thread.ofVirtual().start(() -> answer(c, name));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            return this;
        }

        private static void answer(Socket c, String name) {
            try (c; BufferedReader in = new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.UTF_8))) {
                OutputStream out = c.getOutputStream();
                while (in.readLine() != null) {
                    out.write((name + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        @Override
        public void close() {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    public static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
