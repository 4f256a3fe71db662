package dev.gatun.cli.serve;

import dev.gatun.cli.api.LocalApi;
import dev.gatun.cli.service.ServeSockets;
import dev.gatun.cli.service.Served;
import dev.gatun.cli.events.EventLog;
import dev.gatun.cli.http.RootPeers;
import java.util.function.Consumer;
import java.util.function.ObjIntConsumer;

import dev.gatun.cli.http.UnixHttpServer;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * A serve's two sockets, started and stopped together: the local API (HTTP, for engines and
 * scripts) and the one-shot calls' (the C client's; see {@link ServeWire}).
 */
public final class ApiSockets implements AutoCloseable {

    private final UnixHttpServer api;
    private final OneShotServer calls;
    private final CommandTally commands;

    ApiSockets(UnixHttpServer api, OneShotServer calls, CommandTally commands) {
        this.api = api;
        this.calls = calls;
        this.commands = commands;
    }

    /**
     * Serves {@code served} on its namespace's two sockets, the API's first (starting it refuses
     * when another serve answers for the namespace); {@code commandLines} runs the command lines
     * forwarded to either, {@code requestLog} (or null) gets a line per request or call, {@code
     * answered} (or null) each one's path and status, {@code log} what went wrong with a socket
     * itself; {@code GET /v1/events} serves {@code events}.
     */
    public static ApiSockets start(Served served, CommandLineRunner commandLines, Consumer<String> requestLog,
                                   EventLog events, ObjIntConsumer<String> answered, Consumer<String> log) {
        OneShotCalls calls = new OneShotCalls(served, commandLines, requestLog);
        RootPeers rootPeers = RootPeers.lookUp();
        LocalApi api = new LocalApi(served, calls, requestLog, events, answered, rootPeers);
        UnixHttpServer http = UnixHttpServer.start(ServeSockets.of(served.host()), "gatun-api", api, "rwx------");
        try {
            return new ApiSockets(http, OneShotServer.start(ServeSockets.oneShotOf(served.host()), calls, rootPeers,
                    answered, requestLog, log), calls.tally());
        } catch (RuntimeException e) {
            http.close();
            throw e;
        }
    }

    /** {@link #start}, with a log of its own for requests and events, and nothing told of each answer. */
    public static ApiSockets start(Served served, CommandLineRunner commandLines, Consumer<String> requestLog) {
        return start(served, commandLines, requestLog, new EventLog(), null, System.err::println);
    }

    /** The commands run through either socket so far. */
    public CommandTally commands() {
        return commands;
    }

    /** The local API's socket. */
    public Path socket() {
        return api.socket();
    }

    /** The one-shot calls' socket. */
    public Path callsSocket() {
        return calls.socket();
    }

    /**
     * Begins a graceful stop of both: their socket files go, what still arrives runs nothing
     * (503), and the future completes when no request or call runs any more.
     */
    public CompletableFuture<Void> shutdown() {
        return CompletableFuture.allOf(calls.shutdown(), api.shutdown());
    }

    @Override
    public void close() {
        try {
            calls.close();
        } finally {
            api.close();
        }
    }
}
