package dev.gatun.cli;

import dev.gatun.netns.NetworkNamespace;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The demo's servers and clients: Java sockets opened inside the namespaces (a socket keeps
 * the namespace it was created in), answering each request with a fixed text.
 */
final class DemoTraffic implements Closeable {

    private static final int TIMEOUT_MS = 2000;
    private final List<Closeable> open = new ArrayList<>();

    DemoTraffic tcp(NetworkNamespace ns, String address, int port, String reply) {
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

    DemoTraffic udp(NetworkNamespace ns, String address, int port, String reply) {
        DatagramChannel d = ns.call(() -> {
            DatagramChannel c = DatagramChannel.open();
            c.bind(new InetSocketAddress(address, port));
            return c;
        });
        open.add(d);
        Thread.ofVirtual().start(() -> {
            ByteBuffer buf = ByteBuffer.allocate(512);
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

    static String tcpFetch(NetworkNamespace ns, String address, int port) throws IOException {
        try (SocketChannel c = ns.call(SocketChannel::open)) {
            c.socket().connect(new InetSocketAddress(address, port), TIMEOUT_MS);
            c.socket().setSoTimeout(TIMEOUT_MS);
            return new String(c.socket().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static String udpAsk(NetworkNamespace ns, String address, int port) throws IOException {
        try (DatagramChannel c = ns.call(DatagramChannel::open)) {
            c.socket().setSoTimeout(TIMEOUT_MS);
            c.send(ByteBuffer.wrap("ping".getBytes(StandardCharsets.UTF_8)), new InetSocketAddress(address, port));
            byte[] buf = new byte[512];
            DatagramPacket p = new DatagramPacket(buf, buf.length);
            c.socket().receive(p);
            return new String(buf, 0, p.getLength(), StandardCharsets.UTF_8);
        }
    }

    /** A sysfs attribute of a link in a named namespace, read as ip netns exec sees it. */
    static String sysfs(NetworkNamespace ns, String link, String attribute) {
        try {
            Process p = new ProcessBuilder("ip", "netns", "exec", ns.name(), "cat",
                    "/sys/class/net/" + link + "/" + attribute).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : "unknown";
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    @Override
    public void close() throws IOException {
        for (Closeable c : open) {
            c.close();
        }
    }
}
