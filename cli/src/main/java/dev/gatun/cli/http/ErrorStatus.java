package dev.gatun.cli.http;

import dev.gatun.cli.ExitCode;

/**
 * The one error mapping of every engine adapter: a failure's class is the CLI's exit code
 * ({@link ExitCode#of}), and over HTTP that class is a status.
 */
public final class ErrorStatus {

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

    /** The HTTP status of a failure. */
    public static int of(Throwable failure) {
        return of(ExitCode.of(failure));
    }
}
