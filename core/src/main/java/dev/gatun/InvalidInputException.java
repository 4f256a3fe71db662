package dev.gatun;

/** A value was refused before anything was sent to the kernel; the message names the value. */
public class InvalidInputException extends GatunException {

    public InvalidInputException(String message) {
        super(message);
    }
}
