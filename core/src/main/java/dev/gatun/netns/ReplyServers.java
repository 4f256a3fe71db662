package dev.gatun.netns;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Small TCP and UDP servers inside namespaces that answer every request with a text, and the
 * clients that ask them, so the demo and the tests can prove which container a published port
 * reached. A socket keeps the namespace it was created in. Close to stop every server. Each
 * server reads on a platform thread of its own: a lost wake-up of a virtual thread's read (seen
 * once in the tests, never explained) would read as a port that does not answer.
 */
public final class ReplyServers implements Closeable {

    private static final int CONNECT_TIMEOUT_MS = 2000;
    private static final int UDP_TIMEOUT_MS = 1000;
    private final List<Closeable> open = new ArrayList<>();

    /** A TCP server on {@code address:port} in {@code ns} that writes {@code reply} to each connection. */
    public ReplyServers tcp(NetworkNamespace ns, String address, int port, String reply) {
        return tcp(ns, address, port, peer -> reply);
    }

    /** A TCP server that tells each client the address it sees the client connect from. */
    public ReplyServers tcpWhoAmI(NetworkNamespace ns, String address, int port) {
        return tcp(ns, address, port, peer -> peer.getAddress().getHostAddress());
    }

    /** A UDP server that answers each datagram with {@code reply}. */
    public ReplyServers udp(NetworkNamespace ns, String address, int port, String reply) {
        DatagramChannel d = ns.call(() -> DatagramChannel.open().bind(new InetSocketAddress(address, port)));
        open.add(d);
        Thread.ofPlatform().daemon().start(() -> {
            ByteBuffer buf = ByteBuffer.allocate(2048);
            while (d.isOpen()) {
                try {
                    buf.clear();
                    SocketAddress from = d.receive(buf);
                    d.send(utf8(reply), from);
                } catch (IOException e) {
                    return;
                }
            }
        });
        return this;
    }

    private ReplyServers tcp(NetworkNamespace ns, String address, int port, Function<InetSocketAddress, String> reply) {
        ServerSocketChannel s = ns.call(() -> ServerSocketChannel.open().bind(new InetSocketAddress(address, port)));
        open.add(s);
        Thread.ofPlatform().daemon().start(() -> {
            while (s.isOpen()) {
                try (SocketChannel c = s.accept()) {
                    c.write(utf8(reply.apply((InetSocketAddress) c.getRemoteAddress())));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return this;
    }

    /** What a TCP server at {@code address:port} says to a client in {@code ns}; throws if nothing answers in time. */
    public static String tcpFetch(NetworkNamespace ns, String address, int port) throws IOException {
        try (SocketChannel c = ns.call(SocketChannel::open)) {
            c.socket().connect(new InetSocketAddress(address, port), CONNECT_TIMEOUT_MS);
            c.socket().setSoTimeout(CONNECT_TIMEOUT_MS);
            return new String(c.socket().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Whether a TCP connection from {@code ns} to {@code address:port} gets an answer. */
    public static boolean tcpAnswers(NetworkNamespace ns, String address, int port) {
        try {
            tcpFetch(ns, address, port);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** A UDP client socket in {@code ns}, kept open so its source port stays the same. */
    public static DatagramChannel udpClient(NetworkNamespace ns) {
        return ns.call(() -> {
            DatagramChannel c = DatagramChannel.open().bind(null);
            c.socket().setSoTimeout(UDP_TIMEOUT_MS);
            return c;
        });
    }

    /** Sends one datagram and returns the answer, or null when none came within the socket's timeout. */
    public static String udpAsk(DatagramChannel c, String address, int port) throws IOException {
        c.send(utf8("ping"), new InetSocketAddress(address, port));
        byte[] buf = new byte[2048];
        DatagramPacket p = new DatagramPacket(buf, buf.length);
        try {
            c.socket().receive(p);
        } catch (SocketTimeoutException e) {
            return null;
        }
        return new String(buf, 0, p.getLength(), StandardCharsets.UTF_8);
    }

    private static ByteBuffer utf8(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws IOException {
        for (Closeable c : open) {
            c.close();
        }
    }
}
