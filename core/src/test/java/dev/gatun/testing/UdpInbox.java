package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A UDP socket in a namespace that keeps every payload it receives, so that a test can tell
 * whether a datagram arrived (and a crafted one never did). It reads on a platform thread of
 * its own until closed.
 */
public final class UdpInbox implements AutoCloseable {

    private final DatagramChannel socket;
    private final List<String> received = new CopyOnWriteArrayList<>();

    private UdpInbox(DatagramChannel socket) {
        this.socket = socket;
        Thread.ofPlatform().daemon().name("udp-inbox").start(this::read);
    }

    /** Bound to {@code address}:{@code port} in {@code ns}. */
    public static UdpInbox bind(NetworkNamespace ns, String address, int port) {
        return new UdpInbox(ns.call(() -> DatagramChannel.open().bind(new InetSocketAddress(address, port))));
    }

    private void read() {
        ByteBuffer buf = ByteBuffer.allocate(2048);
        while (socket.isOpen()) {
            try {
                buf.clear();
                socket.receive(buf);
                buf.flip();
                received.add(StandardCharsets.UTF_8.decode(buf).toString());
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Whether {@code payload} has arrived, waiting at most {@code within} for it. */
    public boolean got(String payload, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (!received.contains(payload)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Whether any payload starting with {@code prefix} has arrived, waiting at most {@code within}. */
    public boolean gotAnyStartingWith(String prefix, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (received.stream().noneMatch(p -> p.startsWith(prefix))) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Everything received so far, in order. */
    public List<String> received() {
        return List.copyOf(received);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
