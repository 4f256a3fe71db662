package dev.gatun;

/** A native library gatun needs is not installed; the message names it and the package. */
public final class MissingLibraryException extends EnvironmentException {

    public MissingLibraryException(String message) {
        super(message);
    }
}
