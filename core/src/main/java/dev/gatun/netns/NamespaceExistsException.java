package dev.gatun.netns;

import dev.gatun.GatunException;

/** A named network namespace could not be created because the name is taken. */
public final class NamespaceExistsException extends GatunException {

    public NamespaceExistsException(String name) {
        super("network namespace " + name + " already exists");
    }
}
