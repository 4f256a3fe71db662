package dev.gatun.cli.api;

import dev.gatun.GatunException;
import dev.gatun.cli.GatunCommand;
import dev.gatun.cli.Served;
import dev.gatun.netns.NamedNamespaces;
import dev.gatun.netns.NetworkNamespace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.OptionalInt;

/**
 * The JVM path's own forwarding to a running serve, for when the launcher had no C client to
 * do it (no gcc, or a command line the client does not parse). A command that changes what a
 * serve keeps must run in that serve: run beside it, an unpublish would be undone by the
 * serve's repair a moment after it reported success. Sends exactly the C client's request.
 */
public final class ServeClient {

    private ServeClient() {}

    /**
     * Runs {@code args} in the serve of their namespace and returns its exit code after printing
     * what it printed; empty when no serve runs it (none for that namespace, a stale socket, a
     * command that runs where it is typed), and nothing was printed.
     */
    public static OptionalInt forward(String[] args, OutputStream out, OutputStream err) {
        String name = GatunCommand.subcommandName(args);
        if (name == null || !Served.COMMANDS.contains(name)) {
            return OptionalInt.empty();
        }
        String[] sent = args.clone();
        long inode;
        try {
            inode = ((Number) Files.getAttribute(namespace(sent), "unix:ino")).longValue();
        } catch (IOException | GatunException | IllegalArgumentException e) {
            return OptionalInt.empty(); // the command, run here, says what is wrong with the namespace
        }
        // Held (shared) from before the look for a serve until this JVM exits when the command
        // runs here, so no serve starts reading the kernel in between (see StartLock).
        StartLock lock = StartLock.forCommand();
        OptionalInt forwarded = forward(sent, LocalApi.socketOf(inode), out, err);
        if (forwarded.isPresent() && lock != null) {
            lock.close();
        } else {
            heldWhileRunning = lock;
        }
        return forwarded;
    }

    /** The lock of a command that runs in this JVM, kept until the JVM exits. */
    @SuppressWarnings("unused")
    private static StartLock heldWhileRunning;

    private static OptionalInt forward(String[] sent, Path socket, OutputStream out, OutputStream err) {
        if (!Files.exists(socket)) {
            return OptionalInt.empty();
        }
        byte[] reply;
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
                channel.write(ByteBuffer.wrap(request(sent)));
            } catch (IOException e) {
                return OptionalInt.empty(); // a stale socket, or a serve gone before it read the command
            }
            reply = Channels.newInputStream(channel).readAllBytes();
        } catch (IOException e) {
            return stoppedAnswering(socket, err);
        }
        return answer(reply, socket, out, err);
    }

    /**
     * The file of the namespace the command names, as the CLI resolves it (checked by the serve,
     * which refuses a command for another namespace); a relative path is made absolute in
     * {@code args}, since the serve resolves it in its own working directory.
     */
    private static Path namespace(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--netns") && i + 1 < args.length) {
                args[i + 1] = absolute(args[i + 1]);
                return file(args[i + 1]);
            }
            if (a.startsWith("--netns=")) {
                args[i] = "--netns=" + absolute(a.substring("--netns=".length()));
                return file(args[i].substring("--netns=".length()));
            }
            if (a.equals("--driver")) {
                i++;
            } else if (!a.startsWith("-")) {
                break; // the subcommand: later options are its own
            }
        }
        return NetworkNamespace.current().path();
    }

    private static Path file(String nameOrPath) {
        return nameOrPath.contains("/") ? Path.of(nameOrPath) : NamedNamespaces.pathOf(nameOrPath);
    }

    private static String absolute(String nameOrPath) {
        return nameOrPath.contains("/") ? Path.of(nameOrPath).toAbsolutePath().normalize().toString() : nameOrPath;
    }

    private static byte[] request(String[] args) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (String a : args) {
            body.writeBytes(a.getBytes(StandardCharsets.UTF_8));
            body.write(0);
        }
        String head = "POST /v1/cli HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.size() + "\r\nConnection: close\r\n\r\n";
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(body.toByteArray());
        return all.toByteArray();
    }

    private static OptionalInt answer(byte[] reply, Path socket, OutputStream out, OutputStream err) {
        String text = new String(reply, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (reply.length == 0 || end < 0 || !text.startsWith("HTTP/1.")) {
            return stoppedAnswering(socket, err);
        }
        String[] lines = text.substring(0, end).split("\r\n");
        String[] status = lines[0].split(" ");
        if (status.length < 2 || !status[1].equals("200")) {
            return OptionalInt.empty(); // refused before running: another namespace or driver
        }
        long code = header(lines, "gatun-exit-code");
        long stdout = header(lines, "gatun-stdout-length");
        int content = end + 4;
        long length = header(lines, "content-length");
        if (code < 0 || stdout < 0 || length != reply.length - content || stdout > length) {
            return fail(err, "gatun: the serve on " + socket + " gave an answer this command does not understand\n");
        }
        try {
            out.write(reply, content, (int) stdout);
            out.flush();
            err.write(reply, content + (int) stdout, (int) (length - stdout));
            err.flush();
        } catch (IOException e) {
            return OptionalInt.of(1);
        }
        return OptionalInt.of((int) code);
    }

    private static long header(String[] lines, String name) {
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0 && lines[i].substring(0, colon).toLowerCase(Locale.ROOT).equals(name)) {
                try {
                    return Long.parseLong(lines[i].substring(colon + 1).strip());
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    /** The command may have run: say so rather than run it twice. */
    private static OptionalInt stoppedAnswering(Path socket, OutputStream err) {
        return fail(err, "gatun: the serve on " + socket + " stopped answering while it ran the command; "
                + "check the result with gatun ls\n");
    }

    private static OptionalInt fail(OutputStream err, String message) {
        try {
            err.write(message.getBytes(StandardCharsets.UTF_8));
            err.flush();
        } catch (IOException ignored) {
            // Nothing left to tell it on.
        }
        return OptionalInt.of(1);
    }
}
