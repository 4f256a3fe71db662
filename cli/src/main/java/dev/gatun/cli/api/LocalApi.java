package dev.gatun.cli.api;

import dev.gatun.cli.wire.CommandNames;
import dev.gatun.cli.wire.Refused;
import dev.gatun.cli.wire.ServeWire;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Failure;
import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.events.EventCause;
import dev.gatun.cli.events.EventLog;
import dev.gatun.cli.http.ErrorStatus;
import dev.gatun.cli.http.RootPeers;
import dev.gatun.cli.http.UnixHttpServer;
import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.service.GatunService;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;

/**
 * The local API of {@code gatun serve}: HTTP/1.1 + JSON on {@code /run/gatun/netns-INODE.sock},
 * root only. {@code POST /v1/cli} runs one command line as the CLI would and returns what it
 * printed and its exit code (as the C client's calls on the one-shot socket do, through the
 * same {@link OneShotCalls}); the other paths are the
 * typed requests of {@link ApiRoutes}, run by the same {@link GatunService} as the CLI's
 * commands, answered with the CLI's JSON documents and their failure's class as the HTTP status.
 */
public final class LocalApi extends Handler.Abstract {

    /** The largest request body taken; a command line or a JSON request is far smaller. */
    static final int MAX_BODY = ServeWire.MAX_BODY;

    /**
     * Made at the first JSON body or error document, not when the serve starts: the C client's
     * command lines need no JSON, and a mapper loads some 370 classes (about 4 MiB of an idle serve).
     */
    private static final class Mapper {
        static final ObjectMapper JSON = new ObjectMapper();
    }

    private final GatunService service;
    private final ForwardedCalls calls;
    private final Consumer<String> requestLog;
    private final EventLog events;
    private final ObjIntConsumer<String> answered;
    private final RootPeers rootPeers;

    /**
     * The API of {@code served}: its REST paths through a service of its driver, its paths for
     * forwarded calls through {@code calls}; {@code requestLog} (or null) gets a line per request,
     * {@code answered} (or null) each request's path and status; {@code GET /v1/events} serves
     * {@code events}; only the users {@code rootPeers} allows are served.
     */
    public LocalApi(Served served, ForwardedCalls calls, Consumer<String> requestLog, EventLog events,
                    ObjIntConsumer<String> answered, RootPeers rootPeers) {
        this.service = new GatunService(served::host, Drivers.of(served.driver()), true);
        this.calls = calls;
        this.requestLog = requestLog;
        this.events = events;
        this.answered = answered;
        this.rootPeers = rootPeers;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
        String path = Request.getPathInContext(request);
        answering(request, path, response, callback, () -> {
            SocketChannel channel = UnixHttpServer.channel(request);
            if (channel == null || !rootPeers.allow(channel)) {
                throw new Refused(403, "the gatun API serves root only");
            }
            String template = ApiPaths.check(request.getMethod(), path);
            byte[] body = body(request);
            switch (template) {
                case ServeWire.CLI_PATH -> {
                    List<String> args = ServeWire.commandLine(body);
                    if (CommandNames.waitsOnConnections(args)) {
                        aside(request, path, response, callback, () -> ranHere(calls.commandLine(args, "local API"),
                                response, callback));
                        return true;
                    }
                    ranHere(calls.commandLine(args, "local API"), response, callback);
                }
                case ServeWire.CNI_PATH -> ranHere(calls.run(ServeWire.Kind.CNI, body, "local API"), response, callback);
                case ServeWire.NETAVARK_PATH -> ranHere(calls.run(ServeWire.Kind.NETAVARK, body, "local API"), response,
                        callback);
                case EventStream.PATH -> {
                    EventStream.start(events, query(request), request, response, callback);
                    log(request, path, "200 (a stream)");
                }
                case OpenApiDocument.PATH -> reply(response, callback, 200, "application/json", OpenApiDocument.bytes());
                default -> {
                    return rest(request, path, body, response, callback);
                }
            }
            return false;
        });
        return true;
    }

    /**
     * Runs {@code work}, which answers the request or returns true when it went aside (answered
     * and counted there); a refusal it throws is answered here (421: the client sent it to a
     * serve that cannot run it, and runs it itself). Counts the request once answered.
     */
    private void answering(Request request, String path, Response response, Callback callback, BooleanSupplier work) {
        try {
            if (work.getAsBoolean()) {
                return;
            }
        } catch (Refused e) {
            refused(request, path, response, callback, e.status(), e.getMessage());
        } catch (Served.Misdirected e) {
            refused(request, path, response, callback, 421, e.getMessage());
        }
        counted(path, response);
    }

    /** Answers a request refused before it ran, and logs it. */
    private void refused(Request request, String path, Response response, Callback callback, int status, String message) {
        log(request, path, status + " " + message);
        refuse(response, callback, status, message);
    }

    private void counted(String path, Response response) {
        if (answered != null) {
            answered.accept(path, response.getStatus());
        }
    }

    /**
     * Answers on a virtual thread of its own and returns at once, as the event stream does: a
     * drain waits on conntrack, not on one of the server's threads. The request counts as in
     * flight until it is answered, so a serve that stops gives it the same grace as any other.
     */
    private void aside(Request request, String path, Response response, Callback callback, Runnable answer) {
        Thread.ofVirtual().name("gatun-drain").start(() -> {
            try {
                answering(request, path, response, callback, () -> {
                    answer.run();
                    return false;
                });
            } catch (RuntimeException e) {
                callback.failed(e);
                counted(path, response);
            }
        });
    }

    /**
     * Runs a REST request: its route's typed request, by the service over the serve's driver. A
     * failure is the CLI's error document, with the status of its class (and Retry-After when it
     * may pass if tried again). True when it is answered aside (see {@link #aside}).
     */
    private boolean rest(Request request, String path, byte[] body, Response response, Callback callback) {
        String what = request.getMethod() + " " + path;
        JsonNode json = body.length == 0 ? null : parse(body, what);
        ApiRoutes.Route route;
        try {
            route = ApiRoutes.route(request.getMethod(), path, query(request), json);
        } catch (Refused | Served.Misdirected e) {
            throw e;
        } catch (RuntimeException e) {
            answer(request, path, response, callback, failed(e, response));
            return false;
        }
        if (route.waits()) {
            aside(request, path, response, callback, () -> run(request, path, route, response, callback));
            return true;
        }
        run(request, path, route, response, callback);
        return false;
    }

    private void run(Request request, String path, ApiRoutes.Route route, Response response, Callback callback) {
        String what = request.getMethod() + " " + path;
        ApiRoutes.Answer answer;
        try {
            answer = EventCause.as(what + " (local API)", () -> route.run(service));
        } catch (Refused | Served.Misdirected e) {
            throw e;
        } catch (RuntimeException e) {
            answer = failed(e, response);
        }
        answer(request, path, response, callback, answer);
    }

    /** A failure as the CLI's error document, with the status of its class (and Retry-After when it may pass if tried again). */
    private static ApiRoutes.Answer failed(RuntimeException e, Response response) {
        ErrorStatus.retryAfterSeconds(e).ifPresent(s -> response.getHeaders().put(HttpHeader.RETRY_AFTER, Integer.toString(s)));
        return new ApiRoutes.Answer(ErrorStatus.of(e), Json.error(ExitCode.of(e), Failure.sentence(e)));
    }

    private void answer(Request request, String path, Response response, Callback callback, ApiRoutes.Answer answer) {
        log(request, path, Integer.toString(answer.status()));
        reply(response, callback, answer.status(), "application/json",
                (Json.text(answer.document()) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** The reply to a one-shot call that ran: what it printed, its exit code in a header. */
    private static void ranHere(ServeWire.Printed p, Response response, Callback callback) {
        response.getHeaders().put(ServeWire.EXIT_CODE, Integer.toString(p.code()));
        response.getHeaders().put(ServeWire.STDOUT_LENGTH, Integer.toString(p.stdout().length));
        reply(response, callback, 200, "application/octet-stream", p.body());
    }


    private void log(Request request, String path, String outcome) {
        if (requestLog != null) {
            requestLog.accept(request.getMethod() + " " + path + ": " + outcome);
        }
    }

    static JsonNode parse(byte[] body, String what) {
        try {
            return Mapper.JSON.readTree(body);
        } catch (JsonProcessingException e) {
            throw new Refused(400, what + ": the body is not valid JSON (" + e.getOriginalMessage() + ")");
        } catch (IOException e) {
            throw new Refused(400, what + ": the body cannot be read: " + e.getMessage());
        }
    }

    /** The body, at most {@link #MAX_BODY} bytes; a client that stops sending is cut off by the idle timeout. */
    private static byte[] body(Request request) {
        long declared = request.getLength();
        if (declared > MAX_BODY) {
            throw new Refused(413, "the request body has " + declared + " bytes; at most " + MAX_BODY + " are taken");
        }
        try (InputStream in = Content.Source.asInputStream(request)) {
            // The declared length when there is one: reading up to the limit allocated 16 KiB
            // and more per request for a body of some hundred bytes.
            byte[] b = declared >= 0 ? in.readNBytes((int) declared) : in.readNBytes(MAX_BODY + 1);
            if (b.length > MAX_BODY) {
                throw new Refused(413, "the request body is over " + MAX_BODY + " bytes");
            }
            return b;
        } catch (IOException e) {
            throw new Refused(400, "the request body could not be read: " + e.getMessage());
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
