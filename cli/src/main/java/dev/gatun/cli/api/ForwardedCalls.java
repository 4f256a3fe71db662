package dev.gatun.cli.api;

import dev.gatun.cli.wire.ServeWire;
import java.util.List;

/** What runs the one-shot calls a client forwards to a serve (see OneShotCalls), for the local API's paths of them. */
public interface ForwardedCalls {

    /** Runs a call of {@code kind} whose body is {@code body}; {@code via} names the socket, for the events' cause. */
    ServeWire.Printed run(ServeWire.Kind kind, byte[] body, String via);

    /** Runs a forwarded command line. */
    ServeWire.Printed commandLine(List<String> args, String via);
}
