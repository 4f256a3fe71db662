package dev.gatun.cli.docker;

import dev.gatun.cli.testing.PluginHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plugin's socket refuses what it cannot take and keeps serving: a body over its limit
 * (413, read no further), a truncated or malformed document (400), a method that is not POST
 * (405); then a call dockerd makes is answered as ever. No root or Docker needed.
 */
class PluginServerTest {

    @Test
    void badRequestsAreRefusedWithTheirStatusAndTheServerKeepsServing(@TempDir Path dir) throws IOException {
        List<String> changes = new ArrayList<>();
        Path socket = dir.resolve("gatun.sock");
        try (PluginServer server = PluginServer.start(new DockerPlugin(DockerPluginPropertiesTest.driver(changes),
                line -> { }), socket)) {
            // A body that says it is over the limit is refused before it is read.
            String over = raw(socket, "POST /NetworkDriver.CreateNetwork HTTP/1.1\r\nHost: \r\nContent-Length: "
                    + (PluginServer.MAX_BODY + 1) + "\r\n\r\n{\"NetworkID\": ");
            assertThat(over).startsWith("HTTP/1.1 413").contains("over " + PluginServer.MAX_BODY + " bytes");

            PluginHttp.Response truncated = PluginHttp.post(socket, "NetworkDriver.CreateNetwork", "{\"NetworkID\": \"ab");
            assertThat(truncated.status()).isEqualTo(400);
            assertThat(truncated.body()).contains("\"Err\"").contains("not valid JSON");

            PluginHttp.Response notAnObject = PluginHttp.post(socket, "NetworkDriver.CreateNetwork", "[1, 2]");
            assertThat(notAnObject.status()).isEqualTo(400);
            assertThat(notAnObject.body()).contains("must be a JSON object");

            String get = raw(socket, "GET /Plugin.Activate HTTP/1.1\r\nHost: \r\n\r\n");
            assertThat(get).startsWith("HTTP/1.1 405");

            PluginHttp.Response activate = PluginHttp.post(socket, "Plugin.Activate", "");
            assertThat(activate.status()).isEqualTo(200);
            assertThat(activate.body()).contains("NetworkDriver");
            assertThat(changes).isEmpty();
        }
    }

    /** Sends {@code request} as it is and returns what comes back until the server closes or answers. */
    private static String raw(Path socket, String request) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            c.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
            StringBuilder out = new StringBuilder();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            while (c.read(buf) > 0) {
                out.append(new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII));
                buf.clear();
                if (out.indexOf("\r\n\r\n") >= 0 && out.indexOf("}") >= 0) {
                    break;
                }
            }
            return out.toString();
        }
    }
}
