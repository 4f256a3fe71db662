package dev.gatun.cli.wire;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.GatunException;
import dev.gatun.cli.wire.ServeWire.Printed;
import dev.gatun.cli.http.UnixSockets;
import dev.gatun.netns.NetworkNamespace;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The JVM path's own forwarding to a running serve, for when the launcher had no C client to
 * do it (no gcc, or a command line the client does not parse): command lines and CNI calls. A
 * call that changes what a serve keeps must run in that serve: run beside it, an unpublish (or
 * a CNI DEL) would be undone by the serve's repair a moment after it reported success. Sends
 * exactly the C client's requests.
 */
public final class ServeClient {

    /** Seconds without a byte of the answer after which the caller is told that this still waits (the C client's too). */
    static final int NOTICE_SECONDS = 10;

    private ServeClient() {}

    /**
     * Runs {@code args} in the serve of their namespace and returns its exit code after printing
     * what it printed; empty when no serve runs it (none for that namespace, a stale socket, a
     * command that runs where it is typed), and nothing was printed.
     */
    public static OptionalInt forward(String[] args, OutputStream out, OutputStream err) {
        String name = CommandNames.subcommandOf(args);
        if (name == null || !CommandNames.SERVED.contains(name)) {
            return OptionalInt.empty();
        }
        String[] sent = args.clone();
        long inode;
        try {
            inode = ((Number) Files.getAttribute(namespace(sent), "unix:ino")).longValue();
        } catch (IOException | GatunException | IllegalArgumentException e) {
            return OptionalInt.empty(); // the command, run here, says what is wrong with the namespace
        }
        // A drain waits on connections for as long as they last: no notice for it, as in the C client.
        boolean sayWait = !CommandNames.waitsOnConnections(List.of(sent));
        return underStartLock(() -> post(ServeSockets.oneShotOf(inode), cliRequest(List.of(sent)), out, err,
                sayWait, ServeClient::commandStopped, ServeClient::commandOlder));
    }

    /**
     * Runs {@code args} in the serve on {@code socket}, printing nothing, without the start lock:
     * for a serve's warm-up of its own request path (the lock is for commands that may run in
     * this JVM instead, which these never do). Its exit code; empty when it did not answer.
     */
    public static OptionalInt runQuietly(Path socket, List<String> args) {
        OutputStream none = OutputStream.nullOutputStream();
        return post(socket, cliRequest(args), none, none, false, ServeClient::commandStopped, ServeClient::commandOlder);
    }

    /**
     * Runs a netavark plugin call ({@code args} after {@code netavark}, {@code stdin} its JSON) in
     * the serve on {@code socket} as the C client sends it, writing its stdout to {@code out} and
     * nothing else: for a serve's warm-up, as {@link #runQuietly}. Its exit code; empty when it did not answer.
     */
    public static OptionalInt runNetavarkQuietly(Path socket, List<String> args, byte[] stdin, OutputStream out) {
        return postNetavark(socket, args, stdin, out, OutputStream.nullOutputStream(), false);
    }

    /**
     * Runs a CNI plugin call ({@code env}'s CNI_* variables, {@code config} from stdin) in the
     * serve of this process's namespace, as the C client sends it; empty when no serve runs it.
     * A serve that stops answering mid-call is a CNI error document (code 11, try again) on stdout.
     */
    public static OptionalInt forwardCni(Map<String, String> env, byte[] config, OutputStream out, OutputStream err) {
        Path socket;
        try {
            socket = ServeSockets.oneShotOf(NetworkNamespace.current().inode());
        } catch (GatunException e) {
            return OptionalInt.empty();
        }
        byte[] request = ServeWire.request(ServeWire.Kind.CNI, ServeWire.cniCall(env, config));
        return underStartLock(() -> post(socket, request, out, err, true,
                s -> cniStopped(s, env.get("CNI_COMMAND")), a -> cniError(older(a))));
    }

    /**
     * Runs a netavark plugin call ({@code args} after {@code netavark}, {@code stdin} its JSON)
     * in the serve of this process's namespace, as the C client sends it; empty when no serve
     * runs it. A serve that stops answering mid-call is netavark's error document on stdout.
     */
    public static OptionalInt forwardNetavark(List<String> args, byte[] stdin, OutputStream out, OutputStream err) {
        Path socket;
        try {
            socket = ServeSockets.oneShotOf(NetworkNamespace.current().inode());
        } catch (GatunException e) {
            return OptionalInt.empty();
        }
        return underStartLock(() -> postNetavark(socket, args, stdin, out, err, true));
    }

    /** A netavark plugin call to the serve on {@code socket}, answered as netavark's plugin answers. */
    private static OptionalInt postNetavark(Path socket, List<String> args, byte[] stdin, OutputStream out,
                                            OutputStream err, boolean sayWait) {
        byte[] request = ServeWire.request(ServeWire.Kind.NETAVARK, ServeWire.netavarkCall(args, stdin));
        return post(socket, request, out, err, sayWait, s -> netavarkStopped(s, args.getFirst()),
                a -> netavarkError("gatun " + args.getFirst() + ": " + older(a)));
    }

    /**
     * Holds the start lock (shared) from before the look for a serve until this JVM exits when
     * the call runs here, so no serve starts reading the kernel in between (see StartLock).
     */
    private static OptionalInt underStartLock(Supplier<OptionalInt> forward) {
        StartLock lock = StartLock.forCommand();
        OptionalInt forwarded = forward.get();
        if (forwarded.isPresent() && lock != null) {
            lock.close();
        } else {
            heldWhileRunning = lock;
        }
        return forwarded;
    }

    /** The lock of a call that runs in this JVM, kept until the JVM exits. */
    @SuppressWarnings("unused")
    private static StartLock heldWhileRunning;

    /**
     * One request to the serve on {@code socket}; {@code stopped} is what to print when its answer
     * breaks off, {@code older} when a serve without a calls socket (of an older version, or whose
     * calls socket failed) answers on the API socket beside it: the call must not run beside that
     * serve, whose repair would undo it. With {@code sayWait}, a serve that has not answered for
     * {@link #NOTICE_SECONDS} is said once on {@code err}, as the C client says it.
     */
    private static OptionalInt post(Path socket, byte[] request, OutputStream out, OutputStream err, boolean sayWait,
                                    Function<Path, Printed> stopped, Function<Path, Printed> older) {
        if (!Files.exists(socket)) {
            Path api = ServeSockets.apiBeside(socket);
            return UnixSockets.answers(api) ? print(older.apply(api), out, err) : OptionalInt.empty();
        }
        byte[] reply;
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            try {
                channel.connect(UnixDomainSocketAddress.of(socket));
                ByteBuffer bytes = ByteBuffer.wrap(request);
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
            } catch (IOException e) {
                return OptionalInt.empty(); // a stale socket, or a serve gone before it read the request
            }
            reply = sayWait ? readSayingWaits(channel, socket, err) : Channels.newInputStream(channel).readAllBytes();
        } catch (IOException e) {
            return print(stopped.apply(socket), out, err);
        }
        return answer(reply, out, err, () -> stopped.apply(socket));
    }

    /**
     * The answer, to the end of the connection; once {@link #NOTICE_SECONDS} pass without a byte
     * of it, a sentence on {@code err} says that the serve has not answered and that this waits on
     * (a serve stopped or stuck would otherwise leave its caller waiting without a word).
     */
    private static byte[] readSayingWaits(SocketChannel channel, Path socket, OutputStream err) throws IOException {
        channel.configureBlocking(false);
        ByteArrayOutputStream answer = new ByteArrayOutputStream();
        ByteBuffer buffer = ByteBuffer.allocate(8192);
        long noticeAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(NOTICE_SECONDS);
        // Until bytes come (the serve answers) or the wait is said; then the wait has no bound.
        boolean noticePending = true;
        try (Selector selector = Selector.open()) {
            channel.register(selector, SelectionKey.OP_READ);
            while (true) {
                int n = channel.read(buffer.clear());
                if (n < 0) {
                    return answer.toByteArray();
                }
                if (n > 0) {
                    answer.write(buffer.array(), 0, n);
                    noticePending = false;
                    continue;
                }
                long left = noticeAt - System.nanoTime();
                if (noticePending && left <= 0) {
                    err.write(("gatun: the serve on " + socket + " has not answered for " + NOTICE_SECONDS
                            + " s; still waiting (its log says what it does; if this is interrupted, the call may have run)\n")
                            .getBytes(StandardCharsets.UTF_8));
                    err.flush();
                    noticePending = false;
                    continue;
                }
                selector.select(noticePending ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)) : 0);
                selector.selectedKeys().clear();
            }
        }
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
        return NetworkNamespace.fileOf(nameOrPath);
    }

    private static String absolute(String nameOrPath) {
        return nameOrPath.contains("/") ? file(nameOrPath).toAbsolutePath().normalize().toString() : nameOrPath;
    }

    /**
     * The C client's request for a command line, whole: {@code cli LENGTH}, then each argument
     * followed by a NUL byte. Tests that stand in for many clients send exactly this.
     */
    public static byte[] cliRequest(List<String> args) {
        return ServeWire.request(ServeWire.Kind.CLI, ServeWire.commandLine(args));
    }

    /** What a serve answered to a call, read as the C client reads it (for tests that stand in for clients). */
    public sealed interface Answer {
        /** It ran: its exit code and what it printed. */
        record Ran(int code, String stdout, String stderr) implements Answer {}

        /** Refused before it ran, with the status and why: the client would run it itself. */
        record Refused(int status, String why) implements Answer {}

        /** Cut off or not understood: it may have run. */
        record Broken() implements Answer {}
    }

    /** Reads a whole answer as the C client does. */
    public static Answer read(byte[] answer) {
        return switch (ServeWire.reply(answer)) {
            case ServeWire.Reply.Ran ran -> new Answer.Ran(ran.printed().code(),
                    new String(ran.printed().stdout(), StandardCharsets.UTF_8),
                    new String(ran.printed().stderr(), StandardCharsets.UTF_8));
            case ServeWire.Reply.Refused r -> new Answer.Refused(r.status(), r.why());
            case ServeWire.Reply.Broken b -> new Answer.Broken();
        };
    }

    private static OptionalInt answer(byte[] reply, OutputStream out, OutputStream err, Supplier<Printed> broken) {
        return switch (ServeWire.reply(reply)) {
            case ServeWire.Reply.Ran ran -> print(ran.printed(), out, err);
            case ServeWire.Reply.Refused refused -> OptionalInt.empty(); // another namespace or driver: run it here
            case ServeWire.Reply.Broken b -> print(broken.get(), out, err);
        };
    }

    /** The command may have run: say so rather than run it twice. */
    private static Printed commandStopped(Path socket) {
        return new Printed(1, new byte[0], ("gatun: the serve on " + socket + " stopped answering while it ran the command,"
                + " or gave an answer this command does not understand; check the result with gatun ls\n")
                .getBytes(StandardCharsets.UTF_8));
    }

    /** Part of the call may have run: netavark's error document, asking to try again. */
    private static Printed netavarkStopped(Path socket, String verb) {
        return netavarkError("gatun " + verb + ": the gatun serve on " + socket + " stopped answering while it ran the call, "
                + "or gave an answer this client does not understand; try again");
    }

    /** Part of the call may have run: a CNI error the runtime reads, asking it to try again. */
    private static Printed cniStopped(Path socket, String verb) {
        return cniError("the gatun serve on " + socket + " stopped answering while it ran CNI " + verb
                + ", or gave an answer this plugin does not understand; try again");
    }

    /** Nothing ran: the serve has no calls socket (of a version before it, or that socket failed). */
    private static String older(Path api) {
        return "the gatun serve answering on " + api + " takes no one-shot calls (it is of an older version than this "
                + "gatun, or its calls socket failed: its log says which); restart it (systemctl restart gatun, or stop "
                + "it and start gatun serve again), then try again";
    }

    private static Printed commandOlder(Path api) {
        return new Printed(4, new byte[0], ("gatun: " + older(api) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static Printed netavarkError(String message) {
        return new Printed(1, ("{\"error\": \"" + message + "\"}\n").getBytes(StandardCharsets.UTF_8), new byte[0]);
    }

    private static Printed cniError(String message) {
        return new Printed(1, ("{\"cniVersion\": \"1.1.0\", \"code\": 11, \"msg\": \"" + message + "\"}\n")
                .getBytes(StandardCharsets.UTF_8), new byte[0]);
    }

    private static OptionalInt print(Printed p, OutputStream out, OutputStream err) {
        try {
            out.write(p.stdout());
            out.flush();
            err.write(p.stderr());
            err.flush();
        } catch (IOException e) {
            return OptionalInt.of(1);
        }
        return OptionalInt.of(p.code());
    }
}
