package dev.gatun.cli.service;

import dev.gatun.InvalidInputException;

/**
 * The network options an engine passes through to gatun ({@code docker network create -o},
 * {@code podman network create -o}), named the same for every engine, and how their values read.
 */
public final class DriverOptions {

    public static final String BRIDGE = "gatun.bridge";
    public static final String MTU = "gatun.mtu";
    public static final String ICC = "gatun.icc";
    /** true: each published port counts the packets and bytes sent to it (gatun ls --stats). */
    public static final String COUNTERS = "gatun.counters";
    /** For error messages: the options there are. */
    public static final String ALL = BRIDGE + ", " + MTU + ", " + ICC + " and " + COUNTERS;

    private DriverOptions() {}

    public static int number(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new InvalidInputException("option " + option + "=" + value + " is not a number");
        }
    }

    public static boolean flag(String option, String value) {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new InvalidInputException("option " + option + "=" + value + " must be true or false");
        };
    }
}
