package dev.gatun.driver;

import dev.gatun.GatunException;

/** The request collides with what exists: a port held by another owner, a name taken, a network in use. */
public class ConflictException extends GatunException {

    public ConflictException(String message) {
        super(message);
    }
}
