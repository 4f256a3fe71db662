package dev.gatun.cli.http;

import dev.gatun.RetryableException;
import dev.gatun.cli.ExitCode;

import java.util.OptionalInt;

/**
 * The one error mapping of every engine adapter: a failure's class is the CLI's exit code
 * ({@link ExitCode#of}), and over HTTP that class is a status, with one class more than exit
 * codes have: a failure that may pass if tried again.
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
     * The HTTP status of a failure: its exit code's, but 503 for one that may pass if tried again
     * (other processes kept committing past gatun's own tries, a reply was lost), which the CLI
     * exits 1 for as any other failure.
     */
    public static int of(Throwable failure) {
        return failure instanceof RetryableException ? 503 : of(ExitCode.of(failure));
    }

    /** The seconds to send in Retry-After with a failure's status: 1 for one that may pass, else none. */
    public static OptionalInt retryAfterSeconds(Throwable failure) {
        return failure instanceof RetryableException ? OptionalInt.of(RETRY_AFTER_SECONDS) : OptionalInt.empty();
    }
}
