package dev.gatun;

/** Base of every error gatun reports. Unchecked: callers decide where to handle them. */
public class GatunException extends RuntimeException {

    public GatunException(String message) {
        super(message);
    }

    public GatunException(String message, Throwable cause) {
        super(message, cause);
    }
}
