package dev.gatun.cli.service;

import dev.gatun.InvalidInputException;

/** The check every request makes of the names it is given. */
final class Names {

    private Names() {}

    static String require(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new InvalidInputException("an empty " + what + " name");
        }
        return value;
    }
}
