package dev.gatun.cli.service;

import dev.gatun.EnvironmentException;
import dev.gatun.ErrnoException;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.PrivilegeException;
import dev.gatun.RetryableException;
import dev.gatun.driver.ConflictException;
import dev.gatun.driver.NotFoundException;
import dev.gatun.netns.NamespaceExistsException;

/**
 * The class of a failure, decided here once for every exception; each adapter maps the class,
 * once, into its own terms: the CLI's exit code ({@link ExitCode}), an HTTP status
 * ({@code ErrorStatus}), a CNI error code ({@code CniError}).
 */
public enum Failure {
    /** Bad input or usage; nothing changed. */
    USAGE,
    /** A network, endpoint or namespace named that does not exist; nothing changed. */
    NOT_FOUND,
    /** Held by another owner, already there, in use. */
    CONFLICT,
    /** A privilege, library or kernel feature is missing. */
    ENVIRONMENT,
    /**
     * May pass if tried again: other processes kept committing past gatun's own tries, a reply
     * was lost, or the process or host ran short of descriptors or memory.
     */
    RETRYABLE,
    /** The kernel or a tool refused, or a bug of gatun's. */
    FAILED;

    /** The one sentence a failure is reported with: its message, or its type when it has none. */
    public static String sentence(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }

    public static Failure of(Throwable e) {
        return switch (e) {
            case ConflictException c -> CONFLICT;
            case NamespaceExistsException n -> CONFLICT;
            case NotFoundException n -> NOT_FOUND;
            case InvalidInputException i -> USAGE;
            case PrivilegeException p -> ENVIRONMENT;
            case EnvironmentException m -> ENVIRONMENT;
            case RetryableException r -> RETRYABLE;
            case ErrnoException x when x.isShortage() -> RETRYABLE;
            case GatunException g -> FAILED;
            default -> FAILED;
        };
    }
}
