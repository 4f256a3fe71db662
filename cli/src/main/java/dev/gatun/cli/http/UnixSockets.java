package dev.gatun.cli.http;

import jdk.net.ExtendedSocketOptions;

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

    /** The user of the process at the other end of {@code c} (SO_PEERCRED), or null when the kernel does not say. */
    public static String peerUser(SocketChannel c) {
        try {
            return c.getOption(ExtendedSocketOptions.SO_PEERCRED).user().getName();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }
}
