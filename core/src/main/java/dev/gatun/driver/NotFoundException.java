package dev.gatun.driver;

import dev.gatun.InvalidInputException;

/** A network, endpoint or mapping named in a request does not exist; nothing was changed. */
public class NotFoundException extends InvalidInputException {

    public NotFoundException(String message) {
        super(message);
    }
}
