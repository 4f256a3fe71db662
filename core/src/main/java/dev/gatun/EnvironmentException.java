package dev.gatun;

/** Something gatun needs from the host is missing: a library, a tool, a kernel feature. */
public class EnvironmentException extends GatunException {

    public EnvironmentException(String message) {
        super(message);
    }

    public EnvironmentException(String message, Throwable cause) {
        super(message, cause);
    }
}
