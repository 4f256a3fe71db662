package dev.gatun.cli.http;

import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.Failure;

import java.util.OptionalInt;

/**
 * The HTTP status of a failure, for every adapter that answers over HTTP (the local API, the
 * Docker plugin): its {@link Failure class}, mapped once; and of an exit code, for a command line
 * that ran with nothing more to tell.
 */
public final class ErrorStatus {

    /** gatun has already tried again itself before such a failure: a client waits a second for the others to finish. */
    private static final int RETRY_AFTER_SECONDS = 1;

    private ErrorStatus() {}

    /** The HTTP status of an exit code: 0 200, 2 400, 3 409, 4 503, 1 (and anything else) 500. */
    public static int of(int exitCode) {
        return switch (exitCode) {
            case ExitCode.OK -> 200;
            case ExitCode.USAGE -> 400;
            case ExitCode.CONFLICT -> 409;
            case ExitCode.ENVIRONMENT -> 503;
            default -> 500;
        };
    }

    /**
     * The HTTP status of a failure's {@link Failure class}: 400 for bad input, 404 for a thing
     * named that does not exist, 409, 503 for a missing environment and for one that may pass
     * if tried again (which the CLI exits 1 for, as any other failure), 500 for the rest.
     */
    public static int of(Throwable failure) {
        return switch (Failure.of(failure)) {
            case USAGE -> 400;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case ENVIRONMENT, RETRYABLE -> 503;
            case FAILED -> 500;
        };
    }

    /** The seconds to send in Retry-After with a failure's status: 1 for one that may pass, else none. */
    public static OptionalInt retryAfterSeconds(Throwable failure) {
        return Failure.of(failure) == Failure.RETRYABLE ? OptionalInt.of(RETRY_AFTER_SECONDS) : OptionalInt.empty();
    }
}
