package dev.gatun.netlink;

import dev.gatun.GatunException;

/**
 * A reply that does not hold together as netlink: a message or attribute longer than what
 * contains it, a header cut short, a value of the wrong size. Nothing a retry cures; the
 * message names what was wrong and where.
 */
public final class MalformedReplyException extends GatunException {

    public MalformedReplyException(String message) {
        super(message);
    }
}
