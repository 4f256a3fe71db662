package dev.gatun.cli.wire;

/**
 * A call refused before anything ran, with the HTTP status that says why (400 unreadable, 403
 * not root, 413 too large, 421 for another serve, 503 stopping): what both of a serve's sockets
 * and the framing they share answer instead of running it.
 */
public final class Refused extends RuntimeException {

    private final int status;

    public Refused(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
