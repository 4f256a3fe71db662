package dev.gatun.cli.http;

import dev.gatun.testing.Bounded;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The graceful stop a serve makes on SIGTERM, on a socket in a temporary directory (no root):
 * the socket file goes at once, a request that is running finishes and gets its answer, one
 * that arrives afterwards on a connection made before gets 503 and never reaches the handler,
 * and the shutdown completes only when the running one has.
 */
class UnixHttpServerTest {

    @Test
    void shutdownLetsTheRunningRequestAnswerAndRefusesLaterOnes(@TempDir Path dir) throws Exception {
        Path socket = dir.resolve("api.sock");
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        Handler handler = new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                handled.incrementAndGet();
                if (Request.getPathInContext(request).equals("/slow")) {
                    entered.countDown();
                    Bounded.await(release, "the test's release of the slow request");
                }
                response.setStatus(200);
                response.write(true, ByteBuffer.wrap("done".getBytes(StandardCharsets.US_ASCII)), callback);
                return true;
            }
        };
        UnixHttpServer server = UnixHttpServer.start(socket, "test-http", handler, null);
        try {
            CompletableFuture<String> slow = CompletableFuture.supplyAsync(() -> get(socket, "/slow", null));
            assertThat(entered.await(30, TimeUnit.SECONDS)).as("the slow request reached the handler").isTrue();
            SocketChannel early = SocketChannel.open(UnixDomainSocketAddress.of(socket));

            CompletableFuture<Void> drained = server.shutdown();
            assertThat(socket).as("the socket file goes at once").doesNotExist();
            assertThat(UnixSockets.answers(socket)).isFalse();
            assertThat(drained).as("a request still runs").isNotDone();

            String late = get(socket, "/fast", early);
            assertThat(late).startsWith("HTTP/1.1 503");
            assertThat(handled).as("the late request never reached the handler").hasValue(1);

            release.countDown();
            assertThat(slow.get(30, TimeUnit.SECONDS)).startsWith("HTTP/1.1 200").endsWith("done");
            drained.get(30, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            server.close();
        }
        assertThat(socket).doesNotExist();
    }

    /** GET {@code path} with Connection: close, on {@code channel} or a new connection; the whole answer. */
    private static String get(Path socket, String path, SocketChannel channel) {
        try (SocketChannel ch = channel != null ? channel : SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            ByteBuffer request = ByteBuffer.wrap(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            while (request.hasRemaining()) {
                ch.write(request);
            }
            return new String(Channels.newInputStream(ch).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
