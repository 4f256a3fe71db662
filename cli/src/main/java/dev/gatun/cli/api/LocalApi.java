package dev.gatun.cli.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.ExitCode;
import dev.gatun.cli.GatunCommand;
import dev.gatun.cli.Main;
import dev.gatun.cli.Served;
import dev.gatun.cli.cni.CniPlugin;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.cli.http.UnixHttpServer;
import dev.gatun.driver.NetworkDriver;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The local API of {@code gatun serve}: HTTP/1.1 + JSON on {@code /run/gatun/netns-INODE.sock},
 * root only. {@code POST /v1/cli} runs one command line as the CLI would and returns what it
 * printed and its exit code (the thin C client's one request); the other paths are the
 * command lines of {@link ApiRoutes}, answered with the CLI's JSON documents and its exit
 * code's class as the HTTP status.
 */
public final class LocalApi extends Handler.Abstract {

    /** The largest request body taken; a command line or a JSON request is far smaller. */
    static final int MAX_BODY = 64 * 1024;
    private static final int MAX_ARGS = 512;

    /**
     * Made at the first JSON body or error document, not when the serve starts: the C client's
     * command lines need no JSON, and a mapper loads some 370 classes (about 4 MiB of an idle serve).
     */
    private static final class Mapper {
        static final ObjectMapper JSON = new ObjectMapper();
    }

    private final Served served;
    private final Consumer<String> requestLog;

    private LocalApi(Served served, Consumer<String> requestLog) {
        this.served = served;
        this.requestLog = requestLog;
    }

    /** Serves the API for {@code served} on its namespace's socket; {@code requestLog} (or null) gets a line per request. */
    public static UnixHttpServer start(Served served, Consumer<String> requestLog) {
        return UnixHttpServer.start(ServeSockets.of(served.host()), "gatun-api", new LocalApi(served, requestLog), "rwx------");
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        try {
            if (!"root".equals(UnixHttpServer.peerUser(request))) {
                throw new ApiRoutes.Refused(403, "the gatun API serves root only");
            }
            byte[] body = body(request);
            if (path.equals("/v1/cli")) {
                if (!request.getMethod().equals("POST")) {
                    throw new ApiRoutes.Refused(405, request.getMethod() + " is not allowed on /v1/cli (allowed: POST)");
                }
                commandLine(commandLine(body), response, callback);
            } else if (path.equals("/v1/cni")) {
                if (!request.getMethod().equals("POST")) {
                    throw new ApiRoutes.Refused(405, request.getMethod() + " is not allowed on /v1/cni (allowed: POST)");
                }
                cni(body, response, callback);
            } else {
                JsonNode json = body.length == 0 ? null : parse(body, request.getMethod() + " " + path);
                List<String> args = new ArrayList<>(List.of("--json"));
                args.addAll(ApiRoutes.args(request.getMethod(), path, query(request), json));
                Ran ran = run(args);
                if (ran.failure != null) {
                    ErrorStatus.retryAfterSeconds(ran.failure).ifPresent(
                            s -> response.getHeaders().put(HttpHeader.RETRY_AFTER, Integer.toString(s)));
                }
                reply(response, callback, ran.status(), "application/json", ran.stdout);
            }
        } catch (ApiRoutes.Refused e) {
            log(request, path, e.status + " " + e.getMessage());
            refuse(response, callback, e.status, e.getMessage());
        } catch (Served.Misdirected e) {
            // 421: the client sent this to a serve that cannot run it; it runs it itself.
            log(request, path, "421 " + e.getMessage());
            refuse(response, callback, 421, e.getMessage());
        }
        return true;
    }

    /** Runs a forwarded command line; the C client prints stdout, then stderr, and exits with the code. */
    private void commandLine(List<String> args, Response response, Callback callback) {
        String name = GatunCommand.subcommandName(args.toArray(String[]::new));
        if (name == null || !Served.COMMANDS.contains(name)) {
            throw new Served.Misdirected("'" + name + "' runs where it is typed, not in a serve");
        }
        Ran ran = run(args);
        response.getHeaders().put("Gatun-Exit-Code", Integer.toString(ran.exitCode));
        response.getHeaders().put("Gatun-Stdout-Length", Integer.toString(ran.stdout.length));
        byte[] both = new byte[ran.stdout.length + ran.stderr.length];
        System.arraycopy(ran.stdout, 0, both, 0, ran.stdout.length);
        System.arraycopy(ran.stderr, 0, both, ran.stdout.length, ran.stderr.length);
        reply(response, callback, 200, "application/octet-stream", both);
    }

    /**
     * Runs a forwarded CNI call: the body is the CNI_* environment, each "NAME=VALUE" followed by
     * a NUL byte, then one more NUL byte, then the config the runtime wrote on stdin. Answered as
     * /v1/cli is: the plugin's stdout then its stderr, and its exit code.
     */
    private void cni(byte[] body, Response response, Callback callback) {
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
        byte[] stdin = Arrays.copyOfRange(body, i + 1, body.length);
        CniPlugin.Outcome o = CniPlugin.run(env, stdin, new CniPlugin.Drivers() {
            @Override
            public <T> T with(Function<NetworkDriver, T> work) {
                return work.apply(served.driver());
            }
        });
        if (requestLog != null) {
            requestLog.accept("ran CNI " + env.get("CNI_COMMAND") + " " + env.getOrDefault("CNI_CONTAINERID", "")
                    + ": exit " + o.exitCode());
        }
        response.getHeaders().put("Gatun-Exit-Code", Integer.toString(o.exitCode()));
        response.getHeaders().put("Gatun-Stdout-Length", Integer.toString(o.stdout().length));
        byte[] both = new byte[o.stdout().length + o.stderr().length];
        System.arraycopy(o.stdout(), 0, both, 0, o.stdout().length);
        System.arraycopy(o.stderr(), 0, both, o.stdout().length, o.stderr().length);
        reply(response, callback, 200, "application/octet-stream", both);
    }

    /** A command line's outcome as run here: {@code failure} is null unless a command failed. */
    private record Ran(int exitCode, Throwable failure, byte[] stdout, byte[] stderr) {
        int status() {
            return failure == null ? ErrorStatus.of(exitCode) : ErrorStatus.of(failure);
        }
    }

    private void log(Request request, String path, String outcome) {
        if (requestLog != null) {
            requestLog.accept(request.getMethod() + " " + path + ": " + outcome);
        }
    }

    private Ran run(List<String> args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintWriter o = new PrintWriter(out, true, StandardCharsets.UTF_8);
        PrintWriter e = new PrintWriter(err, true, StandardCharsets.UTF_8);
        Main.Outcome ran = Main.execute(args.toArray(String[]::new), o, e, served);
        o.flush();
        e.flush();
        if (requestLog != null) {
            requestLog.accept("ran gatun " + String.join(" ", args) + ": exit " + ran.exitCode());
        }
        return new Ran(ran.exitCode(), ran.failure(), out.toByteArray(), err.toByteArray());
    }

    /** A command line as the client sends it: each argument followed by a NUL byte, UTF-8. */
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

    private static String utf8(byte[] b, int from, int to) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b, from, to - from)).toString();
        } catch (CharacterCodingException e) {
            throw new ApiRoutes.Refused(400, "an argument of the command line is not UTF-8");
        }
    }

    static JsonNode parse(byte[] body, String what) {
        try {
            return Mapper.JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ApiRoutes.Refused(400, what + ": the body is not valid JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new ApiRoutes.Refused(400, what + ": the body cannot be read: " + e.getMessage());
        }
    }

    /** The body, at most {@link #MAX_BODY} bytes; a client that stops sending is cut off by the idle timeout. */
    private static byte[] body(Request request) {
        long declared = request.getLength();
        if (declared > MAX_BODY) {
            throw new ApiRoutes.Refused(413, "the request body has " + declared + " bytes; at most " + MAX_BODY + " are taken");
        }
        try (InputStream in = Content.Source.asInputStream(request)) {
            byte[] b = in.readNBytes(MAX_BODY + 1);
            if (b.length > MAX_BODY) {
                throw new ApiRoutes.Refused(413, "the request body is over " + MAX_BODY + " bytes");
            }
            return b;
        } catch (IOException e) {
            throw new ApiRoutes.Refused(400, "the request body could not be read: " + e.getMessage());
        }
    }

    private static Map<String, String> query(Request request) {
        Map<String, String> out = new LinkedHashMap<>();
        Fields fields = Request.extractQueryParameters(request);
        for (Fields.Field f : fields) {
            out.put(f.getName(), f.getValue());
        }
        return out;
    }

    private static void refuse(Response response, Callback callback, int status, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", status == 421 ? ExitCode.ENVIRONMENT : status == 409 ? ExitCode.CONFLICT
                : status >= 500 ? ExitCode.FAILED : ExitCode.USAGE);
        error.put("message", message);
        try {
            reply(response, callback, status, "application/json",
                    Mapper.JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(Map.of("error", error)));
        } catch (JsonProcessingException e) {
            callback.failed(e);
        }
    }

    private static void reply(Response response, Callback callback, int status, String type, byte[] body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, type);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, Integer.toString(body.length));
        response.write(true, ByteBuffer.wrap(body), callback);
    }
}
