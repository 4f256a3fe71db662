package dev.gatun.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Real TCP between namespaces, with Java sockets opened inside them (a socket keeps the
 * namespace it was created in).
 */
public final class Traffic {

    private Traffic() {}

    /** A listening TCP socket in {@code ns}. */
    public static ServerSocketChannel listen(NetworkNamespace ns, String address, int port) {
        return ns.call(() -> {
            ServerSocketChannel s = ServerSocketChannel.open();
            s.bind(new InetSocketAddress(address, port));
            return s;
        });
    }

    /** A TCP connection from {@code ns}, made with a timeout. */
    public static SocketChannel connect(NetworkNamespace ns, String address, int port) {
        return ns.call(() -> {
            SocketChannel c = SocketChannel.open();
            c.socket().connect(new InetSocketAddress(address, port), 5000);
            return c;
        });
    }

    /** Sends {@code text} one way and reads it on the other side, with a deadline. */
    public static void roundTrip(SocketChannel from, SocketChannel to, String text) throws IOException {
        byte[] bytes = text.getBytes();
        from.write(ByteBuffer.wrap(bytes));
        to.socket().setSoTimeout(3000);
        byte[] got = new byte[bytes.length];
        int n = 0;
        var in = to.socket().getInputStream();
        while (n < got.length) {
            int r = in.read(got, n, got.length - n);
            if (r < 0) {
                throw new IOException("connection closed after " + n + " bytes of '" + text + "'");
            }
            n += r;
        }
        if (!new String(got).equals(text)) {
            throw new IOException("expected '" + text + "' but read '" + new String(got) + "'");
        }
    }
}
