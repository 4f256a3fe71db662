package dev.gatun.cli.wire;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one-shot calls a serve runs for a client, as bytes, both ways: a command line, a CNI call
 * or a netavark plugin call in, what it printed and its exit code out. The C client
 * ({@code src/main/c/gatun-client.c}) and {@link ServeClient} send them on the serve's one-shot
 * socket ({@link ServeSockets#oneShotOf}), framed as below, and {@link OneShotServer} answers
 * there; the local API takes the same bodies over HTTP ({@code POST /v1/cli}, {@code /v1/cni},
 * {@code /v1/netavark}) for clients that speak HTTP. ServeWireIT holds the C client to this class.
 *
 * <p>A request is an ASCII line {@code KIND LENGTH\n} ({@code cli}, {@code cni} or
 * {@code netavark}; the body's length in bytes), then the body. The answer is an ASCII line
 * {@code STATUS EXIT STDOUT STDERR\n}, then STDOUT bytes of standard output and STDERR bytes of
 * standard error. STATUS 200: the call ran and EXIT is its exit code. Any other status (as HTTP
 * numbers them: 400 unreadable, 403 not root, 413 too large, 421 not for this serve, 503
 * stopping): nothing ran, and the error bytes say why; the client then runs the call itself.
 */
public final class ServeWire {

    /** The most bytes a call's body (or a request's to the local API) may have. */
    public static final int MAX_BODY = 64 * 1024;

    /** What a call is: its word on the one-shot socket and its path on the local API. */
    public enum Kind {
        CLI("cli", CLI_PATH), CNI("cni", CNI_PATH), NETAVARK("netavark", NETAVARK_PATH);

        public final String word;
        public final String path;

        Kind(String word, String path) {
            this.word = word;
            this.path = path;
        }

        /** The kind named {@code word}, or null. */
        static Kind of(String word) {
            for (Kind k : values()) {
                if (k.word.equals(word)) {
                    return k;
                }
            }
            return null;
        }
    }

    public static final String CLI_PATH = "/v1/cli";
    public static final String CNI_PATH = "/v1/cni";
    public static final String NETAVARK_PATH = "/v1/netavark";
    /** The longest first line of a request or an answer. */
    public static final int MAX_HEAD = 64;
    /** The exit code of what ran, in the local API's reply. */
    public static final String EXIT_CODE = "Gatun-Exit-Code";
    /** How many bytes of the reply's body are stdout; stderr follows them. */
    public static final String STDOUT_LENGTH = "Gatun-Stdout-Length";
    /** The most arguments (or CNI variables) a call may have. */
    static final int MAX_ARGS = 512;

    /** What a call printed, and its exit code. */
    public record Printed(int code, byte[] stdout, byte[] stderr) {
        /** The reply's body: stdout, then stderr. */
        public byte[] body() {
            byte[] both = Arrays.copyOf(stdout, stdout.length + stderr.length);
            System.arraycopy(stderr, 0, both, stdout.length, stderr.length);
            return both;
        }
    }

    /** A CNI call: its CNI_* variables and the config the runtime wrote on stdin. */
    public record CniCall(Map<String, String> env, byte[] config) {}

    /** A netavark plugin call: its arguments (the verb, the namespace's path) and the JSON netavark wrote on stdin. */
    public record NetavarkCall(List<String> args, byte[] stdin) {}

    private ServeWire() {}

    /** A command line: each argument followed by a NUL byte, UTF-8. */
    static byte[] commandLine(List<String> args) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        for (String a : args) {
            body.writeBytes(a.getBytes(StandardCharsets.UTF_8));
            body.write(0);
        }
        return body.toByteArray();
    }

    public static List<String> commandLine(byte[] body) {
        List<String> args = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < body.length; i++) {
            if (body[i] == 0) {
                args.add(utf8(body, start, i));
                start = i + 1;
                if (args.size() > MAX_ARGS) {
                    throw new Refused(400, "a command line of more than " + MAX_ARGS + " arguments");
                }
            }
        }
        if (start != body.length) {
            throw new Refused(400, "the command line must end with a NUL byte after its last argument");
        }
        return args;
    }

    /**
     * A CNI call: the CNI_* variables, each "NAME=VALUE" followed by a NUL byte, then one more
     * NUL byte, then the config. Other variables of {@code env} are not sent.
     */
    public static byte[] cniCall(Map<String, String> env, byte[] config) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        env.forEach((name, value) -> {
            if (name.startsWith("CNI_")) {
                body.writeBytes((name + "=" + value).getBytes(StandardCharsets.UTF_8));
                body.write(0);
            }
        });
        body.write(0);
        body.writeBytes(config);
        return body.toByteArray();
    }

    public static CniCall cniCall(byte[] body) {
        Map<String, String> env = new LinkedHashMap<>();
        int start = 0;
        int i = 0;
        for (; i < body.length; i++) {
            if (body[i] == 0) {
                if (i == start) {
                    break; // the empty entry: the config follows
                }
                String entry = utf8(body, start, i);
                int eq = entry.indexOf('=');
                if (eq <= 0) {
                    throw new Refused(400, "a CNI call's variable '" + entry + "' has no NAME=VALUE form");
                }
                if (entry.startsWith("CNI_")) {
                    env.put(entry.substring(0, eq), entry.substring(eq + 1));
                }
                start = i + 1;
                if (env.size() > MAX_ARGS) {
                    throw new Refused(400, "a CNI call of more than " + MAX_ARGS + " variables");
                }
            }
        }
        if (i >= body.length) {
            throw new Refused(400, "a CNI call is its variables, each ending with a NUL byte, an empty one, "
                    + "then the config");
        }
        return new CniCall(env, Arrays.copyOfRange(body, i + 1, body.length));
    }

    /** A netavark plugin call: each argument followed by a NUL byte, one more NUL byte, then stdin. */
    public static byte[] netavarkCall(List<String> args, byte[] stdin) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(commandLine(args));
        body.write(0);
        body.writeBytes(stdin);
        return body.toByteArray();
    }

    public static NetavarkCall netavarkCall(byte[] body) {
        List<String> args = new ArrayList<>();
        int start = 0;
        int i = 0;
        for (; i < body.length; i++) {
            if (body[i] == 0) {
                if (i == start) {
                    break; // the empty argument: stdin follows
                }
                args.add(utf8(body, start, i));
                start = i + 1;
                if (args.size() > MAX_ARGS) {
                    throw new Refused(400, "a netavark call of more than " + MAX_ARGS + " arguments");
                }
            }
        }
        if (i >= body.length || args.isEmpty()) {
            throw new Refused(400, "a netavark call is its arguments, each ending with a NUL byte, an empty "
                    + "one, then stdin");
        }
        return new NetavarkCall(args, Arrays.copyOfRange(body, i + 1, body.length));
    }

    /** The whole request of a call, as the C client sends it. */
    public static byte[] request(Kind kind, byte[] body) {
        ByteArrayOutputStream all = new ByteArrayOutputStream(body.length + 24);
        all.writeBytes((kind.word + " " + body.length + "\n").getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(body);
        return all.toByteArray();
    }

    /** A request's first line, read: what it is and how many bytes of body follow. */
    public record Head(Kind kind, int length) {}

    /**
     * A call read as its bytes come, from a socket that may have only part of it: its first line,
     * checked as soon as it is in (a call that cannot be one is refused before its body is
     * read), then its body of the length the line says.
     */
    public static final class CallReader {
        private final int maxBody;
        private ByteBuffer buffer = ByteBuffer.allocate(1024);
        private Head head;
        private int bodyFrom;

        /** A reader of calls whose body has at most {@code maxBody} bytes. */
        public CallReader(int maxBody) {
            this.maxBody = maxBody;
        }

        /** Reads what {@code channel} has; true once the call is whole. A {@link Refused} when it cannot be one. */
        public boolean readFrom(ReadableByteChannel channel) throws IOException {
            while (!complete()) {
                if (!buffer.hasRemaining()) {
                    // Only once the first line is in: the first buffer holds any line taken.
                    buffer = ByteBuffer.allocate(bodyFrom + head.length()).put(buffer.flip());
                }
                int n = channel.read(buffer);
                if (n < 0) {
                    throw new Refused(400, "the call ended before its " + (head == null ? "first line" : "body") + " did");
                }
                if (head == null) {
                    readHead();
                }
                if (n == 0) {
                    return complete();
                }
            }
            return true;
        }

        private void readHead() {
            byte[] b = buffer.array();
            for (int i = 0; i < buffer.position(); i++) {
                if (b[i] == '\n') {
                    head = head(new String(b, 0, i, StandardCharsets.US_ASCII), maxBody);
                    bodyFrom = i + 1;
                    return;
                }
            }
            if (buffer.position() > MAX_HEAD) {
                throw new Refused(400, "a call's first line is at most " + MAX_HEAD + " bytes");
            }
        }

        /** Whether the whole call is in. */
        public boolean complete() {
            return head != null && buffer.position() >= bodyFrom + head.length();
        }

        /** The call's kind, once its first line is in; else null. */
        public Kind kind() {
            return head == null ? null : head.kind();
        }

        /** The call's body, once it is whole. */
        public byte[] body() {
            byte[] b = new byte[head.length()];
            System.arraycopy(buffer.array(), bodyFrom, b, 0, b.length);
            return b;
        }
    }

    /**
     * The first line of a request ({@code line} without its newline), checked: a known kind and a
     * length of at most {@code maxBody}.
     */
    public static Head head(String line, int maxBody) {
        int space = line.indexOf(' ');
        Kind kind = space < 0 ? null : Kind.of(line.substring(0, space));
        if (kind == null) {
            throw new Refused(400, "a call starts with 'cli', 'cni' or 'netavark', a space, its length "
                    + "and a newline, not '" + line + "'");
        }
        String digits = line.substring(space + 1);
        if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new Refused(400, "a call's length is a decimal number of bytes, not '" + digits + "'");
        }
        int length = Integer.parseInt(digits);
        if (length > maxBody) {
            throw new Refused(413, "the call has " + length + " bytes; at most " + maxBody + " are taken");
        }
        return new Head(kind, length);
    }

    /** The answer to a call that ran. */
    public static byte[] answer(Printed p) {
        return framed(200, p.code(), p.stdout(), p.stderr());
    }

    /** The answer to a call refused before it ran, {@code why} in its error bytes. */
    public static byte[] refusal(int status, String why) {
        return framed(status, 0, new byte[0], ("gatun serve: " + why + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] framed(int status, int code, byte[] stdout, byte[] stderr) {
        byte[] head = (status + " " + code + " " + stdout.length + " " + stderr.length + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] all = Arrays.copyOf(head, head.length + stdout.length + stderr.length);
        System.arraycopy(stdout, 0, all, head.length, stdout.length);
        System.arraycopy(stderr, 0, all, head.length + stdout.length, stderr.length);
        return all;
    }

    /** The outcome of a whole answer to a call. */
    sealed interface Reply {
        /** It ran: what it printed. */
        record Ran(Printed printed) implements Reply {}

        /** Refused before it ran (another namespace or driver, a call that runs where it is typed): why. */
        record Refused(int status, String why) implements Reply {}

        /** Cut off or not understood: it may have run. */
        record Broken() implements Reply {}
    }

    static Reply reply(byte[] reply) {
        int newline = -1;
        for (int i = 0; i < Math.min(reply.length, MAX_HEAD); i++) {
            if (reply[i] == '\n') {
                newline = i;
                break;
            }
        }
        if (newline < 0) {
            return new Reply.Broken();
        }
        String[] fields = new String(reply, 0, newline, StandardCharsets.US_ASCII).split(" ");
        long[] n = new long[4];
        if (fields.length != 4) {
            return new Reply.Broken();
        }
        for (int i = 0; i < 4; i++) {
            try {
                n[i] = Long.parseLong(fields[i]);
            } catch (NumberFormatException e) {
                return new Reply.Broken();
            }
        }
        int body = newline + 1;
        if (n[0] != 200) {
            // Nothing ran, whatever follows; the error bytes, when they are whole, say why.
            boolean whole = n[2] >= 0 && n[3] >= 0 && n[2] + n[3] == reply.length - body;
            return new Reply.Refused((int) n[0], whole ? new String(reply, body + (int) n[2], (int) n[3],
                    StandardCharsets.UTF_8) : "");
        }
        if (n[2] < 0 || n[3] < 0 || n[2] + n[3] != reply.length - body) {
            return new Reply.Broken();
        }
        int errorsFrom = body + (int) n[2];
        return new Reply.Ran(new Printed((int) n[1], Arrays.copyOfRange(reply, body, errorsFrom),
                Arrays.copyOfRange(reply, errorsFrom, reply.length)));
    }

    private static String utf8(byte[] b, int from, int to) {
        if (isAscii(b, from, to)) {
            // Nearly every argument: one copy, where the checking decoder made a decoder and a buffer per argument.
            return new String(b, from, to - from, StandardCharsets.US_ASCII);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b, from, to - from)).toString();
        } catch (CharacterCodingException e) {
            throw new Refused(400, "an argument of the command line is not UTF-8");
        }
    }

    private static boolean isAscii(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return false;
            }
        }
        return true;
    }
}
