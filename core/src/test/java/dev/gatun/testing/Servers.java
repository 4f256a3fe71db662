package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Small TCP and UDP servers inside namespaces that answer every request with a fixed text, so
 * a test can tell which container answered. Close to stop them all.
 */
public final class Servers implements AutoCloseable {

    private final List<java.io.Closeable> open = new ArrayList<>();

    /** A TCP server on {@code address:port} in {@code ns} that writes {@code reply} to each connection. */
    public Servers tcp(NetworkNamespace ns, String address, int port, String reply) {
        ServerSocketChannel s = ns.call(() -> {
            ServerSocketChannel c = ServerSocketChannel.open();
            c.bind(new InetSocketAddress(address, port));
            return c;
        });
        open.add(s);
        Thread.ofVirtual().start(() -> {
            while (s.isOpen()) {
                try (SocketChannel c = s.accept()) {
                    c.write(ByteBuffer.wrap(reply.getBytes(StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return this;
    }

    /** A TCP server that tells each client the address it sees the client connect from. */
    public Servers tcpWhoAmI(NetworkNamespace ns, String address, int port) {
        ServerSocketChannel s = ns.call(() -> {
            ServerSocketChannel c = ServerSocketChannel.open();
            c.bind(new InetSocketAddress(address, port));
            return c;
        });
        open.add(s);
        Thread.ofVirtual().start(() -> {
            while (s.isOpen()) {
                try (SocketChannel c = s.accept()) {
                    String peer = ((InetSocketAddress) c.getRemoteAddress()).getAddress().getHostAddress();
                    c.write(ByteBuffer.wrap(peer.getBytes(StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return this;
    }

    /** A UDP server that answers each datagram with {@code reply}. */
    public Servers udp(NetworkNamespace ns, String address, int port, String reply) {
        DatagramChannel d = ns.call(() -> {
            DatagramChannel c = DatagramChannel.open();
            c.bind(new InetSocketAddress(address, port));
            return c;
        });
        open.add(d);
        Thread.ofVirtual().start(() -> {
            ByteBuffer buf = ByteBuffer.allocate(2048);
            while (d.isOpen()) {
                try {
                    buf.clear();
                    var from = d.receive(buf);
                    d.send(ByteBuffer.wrap(reply.getBytes(StandardCharsets.UTF_8)), from);
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
            c.socket().connect(new InetSocketAddress(address, port), 2000);
            c.socket().setSoTimeout(2000);
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
            DatagramChannel c = DatagramChannel.open();
            c.bind(null);
            c.socket().setSoTimeout(1000);
            return c;
        });
    }

    /** Sends one datagram and returns the answer, or null when none came within the socket's timeout. */
    public static String udpAsk(DatagramChannel c, String address, int port) throws IOException {
        c.send(ByteBuffer.wrap("ping".getBytes(StandardCharsets.UTF_8)), new InetSocketAddress(address, port));
        byte[] buf = new byte[2048];
        java.net.DatagramPacket p = new java.net.DatagramPacket(buf, buf.length);
        try {
            c.socket().receive(p);
        } catch (SocketTimeoutException e) {
            return null;
        }
        return new String(buf, 0, p.getLength(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        for (java.io.Closeable c : open) {
            c.close();
        }
    }
}
