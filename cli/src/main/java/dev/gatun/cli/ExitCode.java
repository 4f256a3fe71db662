package dev.gatun.cli;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.EnvironmentException;
import dev.gatun.PrivilegeException;
import dev.gatun.RetryableException;
import dev.gatun.driver.ConflictException;
import dev.gatun.netns.NamespaceExistsException;

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

    /** The exit code of a failure: what the CLI exits with and, through {@code ErrorStatus}, what the adapters answer. */
    public static int of(Throwable e) {
        return switch (e) {
            case ConflictException c -> CONFLICT;
            case NamespaceExistsException n -> CONFLICT;
            case InvalidInputException i -> USAGE;
            case PrivilegeException p -> ENVIRONMENT;
            case EnvironmentException m -> ENVIRONMENT;
            // Another process kept committing, or a reply was lost: it failed now (a later try may not).
            case RetryableException r -> FAILED;
            case GatunException g -> FAILED;
            default -> FAILED;
        };
    }
}
