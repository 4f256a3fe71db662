package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A UDP client that keeps sending from one source port, one datagram every interval ("PREFIX-N"),
 * as a game client, a DNS forwarder or a metrics agent does: its conntrack entry, once made, is
 * refreshed by every datagram. Never reads answers. Close to stop it.
 */
public final class SteadyUdpClient implements AutoCloseable {

    private final DatagramChannel socket;
    private final String prefix;
    private final AtomicInteger sent = new AtomicInteger();
    private final Thread sender;
    private final Duration every;
    private volatile boolean running = true;
    private volatile boolean paused;

    private SteadyUdpClient(DatagramChannel socket, String prefix, InetSocketAddress to, Duration every) {
        this.socket = socket;
        this.prefix = prefix;
        this.every = every;
        this.sender = Thread.ofPlatform().daemon().name("steady-udp-client").start(() -> {
            while (running) {
                try {
                    if (paused) {
                        Thread.sleep(every);
                        continue;
                    }
                    socket.send(ByteBuffer.wrap((prefix + "-" + sent.incrementAndGet()).getBytes(StandardCharsets.UTF_8)), to);
                    Thread.sleep(every);
                } catch (IOException | InterruptedException e) {
                    return;
                }
            }
        });
    }

    /** Starts sending from {@code ns} to {@code address}:{@code port}, from a port of its own that stays the same. */
    public static SteadyUdpClient start(NetworkNamespace ns, String address, int port, String prefix, Duration every) {
        DatagramChannel socket = ns.call(() -> DatagramChannel.open().bind(new InetSocketAddress(0)));
        return new SteadyUdpClient(socket, prefix, new InetSocketAddress(address, port), every);
    }

    /** What each datagram begins with. */
    public String prefix() {
        return prefix;
    }

    /** Waits until it has sent {@code count} datagrams. */
    public void awaitSent(int count) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (sent.get() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the client sent " + sent.get() + " datagrams in 10 s, not " + count);
            }
            Thread.sleep(10);
        }
    }

    /** Stops sending until {@link #resume}, keeping its socket and source port; returns once no datagram is under way. */
    public void pause() throws InterruptedException {
        paused = true;
        Thread.sleep(every.multipliedBy(2));
    }

    public void resume() {
        paused = false;
    }

    /** How many it has sent. */
    public int sent() {
        return sent.get();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        running = false;
        sender.interrupt();
        Bounded.join(sender, "the steady UDP client's sender");
        socket.close();
    }
}
