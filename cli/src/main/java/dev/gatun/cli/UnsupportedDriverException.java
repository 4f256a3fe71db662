package dev.gatun.cli;

import dev.gatun.GatunException;

/** A driver that this build cannot provide on this host. */
final class UnsupportedDriverException extends GatunException {
    UnsupportedDriverException(String message) {
        super(message);
    }
}
