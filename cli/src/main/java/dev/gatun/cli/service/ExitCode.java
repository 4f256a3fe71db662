package dev.gatun.cli.service;

/** The exit codes of the gatun command: part of its contract. */
public final class ExitCode {

    /** Success. */
    public static final int OK = 0;
    /** The operation failed in the kernel or in a tool. */
    public static final int FAILED = 1;
    /** Invalid usage or input, including a network or namespace that does not exist; nothing changed. */
    public static final int USAGE = 2;
    /** Conflict: held by another owner, already exists, in use. */
    public static final int CONFLICT = 3;
    /** Environment: missing privilege, library or kernel feature. */
    public static final int ENVIRONMENT = 4;

    private ExitCode() {}

    /** The exit code of a failure's {@link Failure class}: what the CLI exits with. */
    public static int of(Throwable e) {
        return switch (Failure.of(e)) {
            case USAGE, NOT_FOUND -> USAGE;
            case CONFLICT -> CONFLICT;
            case ENVIRONMENT -> ENVIRONMENT;
            // It failed now (a later try may not): the CLI exits as for any other failure.
            case RETRYABLE, FAILED -> FAILED;
        };
    }
}
