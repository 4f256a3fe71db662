package dev.gatun.cli.api;

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
