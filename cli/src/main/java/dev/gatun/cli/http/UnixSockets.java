package dev.gatun.cli.http;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/** What a unix socket's file says of its server. Apart from the servers, so that a one-shot command loads no HTTP code. */
public final class UnixSockets {

    private UnixSockets() {}

    /** Whether a server accepts connections on {@code socket} now (a file left by a dead one does not). */
    public static boolean answers(Path socket) {
        if (!Files.exists(socket)) {
            return false;
        }
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
