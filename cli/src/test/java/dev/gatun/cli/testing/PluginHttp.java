package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A deliberately small HTTP/1.1 client for Docker's plugin protocol over a unix socket, written
 * from the wire format (not a library), so a test controls every byte: it sends what dockerd
 * 20.10 sends (an empty Host header, Go's User-Agent, Accept of the v1.2 media type, a
 * Content-Length and no Content-Type of its own; we add the plugin Content-Type, as other clients
 * do) and reads one response.
 */
public final class PluginHttp {

    public static final String MEDIA_TYPE = "application/vnd.docker.plugins.v1+json";
    private static final long TIMEOUT_SECONDS = 10;

    private PluginHttp() {}

    public record Response(int status, Map<String, String> headers, String body) {
        public boolean ok() {
            return status >= 200 && status < 300;
        }

        public JsonNode json() {
            try {
                return GatunCli.JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("the plugin answered " + status + " with a body that is not JSON: " + body, e);
            }
        }

        /** The error text of a failed call: {"Err": "..."}. */
        public String err() {
            JsonNode err = json().get("Err");
            if (err == null || !err.isTextual()) {
                throw new AssertionError("the plugin answered " + status + " without an \"Err\" text: " + body);
            }
            return err.asText();
        }

        @Override
        public String toString() {
            return status + " " + headers + " " + body;
        }
    }

    public static Response post(Path socket, String method, String body) {
        return post(socket, method, body.getBytes(StandardCharsets.UTF_8));
    }

    public static Response post(Path socket, String method, JsonNode body) {
        return post(socket, method, body.toString());
    }

    /** POST /{method} with {@code body}; fails the test when nothing (or no HTTP) comes back in time. */
    public static Response post(Path socket, String method, byte[] body) {
        CompletableFuture<Response> f = new CompletableFuture<>();
        SocketChannel[] channel = new SocketChannel[1];
        Thread.ofVirtual().start(() -> {
            try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel[0] = c;
                c.connect(UnixDomainSocketAddress.of(socket));
                String head = "POST /" + method + " HTTP/1.1\r\n"
                        + "Host: \r\n"
                        + "User-Agent: Go-http-client/1.1\r\n"
                        + "Content-Length: " + body.length + "\r\n"
                        + "Accept: application/vnd.docker.plugins.v1.2+json\r\n"
                        + "Content-Type: " + MEDIA_TYPE + "\r\n"
                        + "\r\n";
                ByteBuffer out = ByteBuffer.allocate(head.length() + body.length);
                out.put(head.getBytes(StandardCharsets.US_ASCII)).put(body).flip();
                while (out.hasRemaining()) {
                    c.write(out);
                }
                f.complete(read(c));
            } catch (IOException | RuntimeException e) {
                f.completeExceptionally(e);
            }
        });
        try {
            return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            try {
                if (channel[0] != null) {
                    channel[0].close();
                }
            } catch (IOException ignored) {
                // closing only to unblock the reader
            }
            throw new AssertionError("POST /" + method + " to " + socket + ": no complete answer within " + TIMEOUT_SECONDS + " s");
        } catch (ExecutionException e) {
            throw new AssertionError("POST /" + method + " to " + socket + " failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** One response: status line, headers, then a body by Content-Length, chunked, or up to EOF. */
    private static Response read(SocketChannel c) throws IOException {
        Reader r = new Reader(c);
        String statusLine = r.line();
        if (statusLine == null || !statusLine.startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP response: " + statusLine);
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        String line;
        while ((line = r.line()) != null && !line.isEmpty()) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT), line.substring(colon + 1).strip());
        }
        byte[] body;
        if (headers.containsKey("content-length")) {
            body = r.bytes(Integer.parseInt(headers.get("content-length")));
        } else if ("chunked".equalsIgnoreCase(headers.getOrDefault("transfer-encoding", ""))) {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            while (true) {
                int size = Integer.parseInt(r.line().split(";")[0].strip(), 16);
                if (size == 0) {
                    while ((line = r.line()) != null && !line.isEmpty()) {
                        // trailers
                    }
                    break;
                }
                all.writeBytes(r.bytes(size));
                r.line();
            }
            body = all.toByteArray();
        } else {
            body = r.rest();
        }
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    private static final class Reader {
        private final SocketChannel c;
        private final ByteBuffer buf = ByteBuffer.allocate(65536).flip();

        public Reader(SocketChannel c) {
            this.c = c;
        }

        private boolean fill() throws IOException {
            buf.compact();
            int n = c.read(buf);
            buf.flip();
            return n > 0;
        }

        public String line() throws IOException {
            StringBuilder sb = new StringBuilder();
            while (true) {
                while (buf.hasRemaining()) {
                    char ch = (char) (buf.get() & 0xff);
                    if (ch == '\n') {
                        int len = sb.length();
                        return len > 0 && sb.charAt(len - 1) == '\r' ? sb.substring(0, len - 1) : sb.toString();
                    }
                    sb.append(ch);
                }
                if (!fill()) {
                    return sb.isEmpty() ? null : sb.toString();
                }
            }
        }

        public byte[] bytes(int n) throws IOException {
            byte[] out = new byte[n];
            int got = 0;
            while (got < n) {
                if (!buf.hasRemaining() && !fill()) {
                    throw new IOException("the connection ended after " + got + " of " + n + " body bytes");
                }
                int k = Math.min(n - got, buf.remaining());
                buf.get(out, got, k);
                got += k;
            }
            return out;
        }

        public byte[] rest() throws IOException {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            do {
                byte[] chunk = new byte[buf.remaining()];
                buf.get(chunk);
                all.writeBytes(chunk);
            } while (fill());
            return all.toByteArray();
        }
    }
}
