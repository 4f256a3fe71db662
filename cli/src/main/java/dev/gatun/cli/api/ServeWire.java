package dev.gatun.cli.api;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The one-shot calls a serve runs for a client, as bytes, both ways: a command line
 * ({@code POST /v1/cli}), a CNI call ({@code POST /v1/cni}) or a netavark plugin call
 * ({@code POST /v1/netavark}) in, what it printed and its exit
 * code out. {@link ServeClient} writes and reads them here, {@link LocalApi} reads and writes them
 * here; the C client ({@code src/main/c/gatun-client.c}) speaks the same, which ServeWireTest
 * holds against this class.
 */
final class ServeWire {

    static final String CLI_PATH = "/v1/cli";
    static final String CNI_PATH = "/v1/cni";
    static final String NETAVARK_PATH = "/v1/netavark";
    /** The exit code of what ran, in the reply. */
    static final String EXIT_CODE = "Gatun-Exit-Code";
    /** How many bytes of the reply's body are stdout; stderr follows them. */
    static final String STDOUT_LENGTH = "Gatun-Stdout-Length";
    /** The most arguments (or CNI variables) a call may have. */
    static final int MAX_ARGS = 512;

    /** What a call printed, and its exit code. */
    record Printed(int code, byte[] stdout, byte[] stderr) {
        /** The reply's body: stdout, then stderr. */
        byte[] body() {
            byte[] both = Arrays.copyOf(stdout, stdout.length + stderr.length);
            System.arraycopy(stderr, 0, both, stdout.length, stderr.length);
            return both;
        }
    }

    /** A CNI call: its CNI_* variables and the config the runtime wrote on stdin. */
    record CniCall(Map<String, String> env, byte[] config) {}

    /** A netavark plugin call: its arguments (the verb, the namespace's path) and the JSON netavark wrote on stdin. */
    record NetavarkCall(List<String> args, byte[] stdin) {}

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

    static List<String> commandLine(byte[] body) {
        List<String> args = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < body.length; i++) {
            if (body[i] == 0) {
                args.add(utf8(body, start, i));
                start = i + 1;
                if (args.size() > MAX_ARGS) {
                    throw new ApiRoutes.Refused(400, "a command line of more than " + MAX_ARGS + " arguments");
                }
            }
        }
        if (start != body.length) {
            throw new ApiRoutes.Refused(400, "the command line must end with a NUL byte after its last argument");
        }
        return args;
    }

    /**
     * A CNI call: the CNI_* variables, each "NAME=VALUE" followed by a NUL byte, then one more
     * NUL byte, then the config. Other variables of {@code env} are not sent.
     */
    static byte[] cniCall(Map<String, String> env, byte[] config) {
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

    static CniCall cniCall(byte[] body) {
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
                    throw new ApiRoutes.Refused(400, "a CNI call's variable '" + entry + "' has no NAME=VALUE form");
                }
                if (entry.startsWith("CNI_")) {
                    env.put(entry.substring(0, eq), entry.substring(eq + 1));
                }
                start = i + 1;
                if (env.size() > MAX_ARGS) {
                    throw new ApiRoutes.Refused(400, "a CNI call of more than " + MAX_ARGS + " variables");
                }
            }
        }
        if (i >= body.length) {
            throw new ApiRoutes.Refused(400, "a CNI call is its variables, each ending with a NUL byte, an empty one, "
                    + "then the config");
        }
        return new CniCall(env, Arrays.copyOfRange(body, i + 1, body.length));
    }

    /** A netavark plugin call: each argument followed by a NUL byte, one more NUL byte, then stdin. */
    static byte[] netavarkCall(List<String> args, byte[] stdin) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(commandLine(args));
        body.write(0);
        body.writeBytes(stdin);
        return body.toByteArray();
    }

    static NetavarkCall netavarkCall(byte[] body) {
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
                    throw new ApiRoutes.Refused(400, "a netavark call of more than " + MAX_ARGS + " arguments");
                }
            }
        }
        if (i >= body.length || args.isEmpty()) {
            throw new ApiRoutes.Refused(400, "a netavark call is its arguments, each ending with a NUL byte, an empty "
                    + "one, then stdin");
        }
        return new NetavarkCall(args, Arrays.copyOfRange(body, i + 1, body.length));
    }

    /** The whole HTTP request of a call to {@code path}, as the C client sends it. */
    static byte[] request(String path, byte[] body) {
        String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                + "Content-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(body);
        return all.toByteArray();
    }

    /** The outcome of a whole HTTP reply to a call. */
    sealed interface Reply {
        /** It ran: what it printed. */
        record Ran(Printed printed) implements Reply {}

        /** Refused before it ran (another namespace or driver, a command that runs where it is typed). */
        record Refused() implements Reply {}

        /** Cut off or not understood: it may have run. */
        record Broken() implements Reply {}
    }

    static Reply reply(byte[] reply) {
        String text = new String(reply, StandardCharsets.ISO_8859_1);
        int end = text.indexOf("\r\n\r\n");
        if (reply.length == 0 || end < 0 || !text.startsWith("HTTP/1.")) {
            return new Reply.Broken();
        }
        String[] lines = text.substring(0, end).split("\r\n");
        String[] status = lines[0].split(" ");
        if (status.length < 2 || !status[1].equals("200")) {
            return new Reply.Refused();
        }
        long code = header(lines, EXIT_CODE);
        long stdout = header(lines, STDOUT_LENGTH);
        int content = end + 4;
        long length = header(lines, "Content-Length");
        if (code < 0 || stdout < 0 || length != reply.length - content || stdout > length) {
            return new Reply.Broken();
        }
        return new Reply.Ran(new Printed((int) code, Arrays.copyOfRange(reply, content, content + (int) stdout),
                Arrays.copyOfRange(reply, content + (int) stdout, reply.length)));
    }

    private static long header(String[] lines, String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0 && lines[i].substring(0, colon).toLowerCase(Locale.ROOT).equals(wanted)) {
                try {
                    return Long.parseLong(lines[i].substring(colon + 1).strip());
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
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
            throw new ApiRoutes.Refused(400, "an argument of the command line is not UTF-8");
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
