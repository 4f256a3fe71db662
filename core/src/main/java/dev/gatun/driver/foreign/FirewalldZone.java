package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import dev.gatun.internal.Tool;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * firewalld's {@code trusted} zone, through firewalld's own interface ({@code firewall-cmd},
 * which speaks D-Bus to the daemon on the system bus, {@code DBUS_SYSTEM_BUS_ADDRESS}): gatun's
 * bridges are put in it at run time, never in the permanent configuration, as Podman does. A
 * reload forgets them and re-creates firewalld's table, and a repair puts them back.
 */
final class FirewalldZone {

    static final String ZONE = "trusted";
    private static final String PROGRAM = "firewall-cmd";

    private final Tool tool;

    FirewalldZone(Tool tool) {
        this.tool = tool;
    }

    boolean installed() {
        return tool.find(PROGRAM) != null;
    }

    /** The bridges not in the zone now: one call, whatever their number (each costs a Python start). */
    List<String> missing(List<String> bridges) {
        Tool.Result r = tool.run(PROGRAM, List.of("--zone=" + ZONE, "--list-interfaces"), null);
        if (r.exitCode() != 0) {
            throw failure("list the interfaces of firewalld's zone " + ZONE, r);
        }
        List<String> in = List.of(r.stdout().strip().split("\\s+"));
        return bridges.stream().filter(b -> !in.contains(b)).toList();
    }

    /** Puts the missing bridges in the zone, in one call; returns what it changed. */
    Optional<String> add(List<String> bridges) {
        List<String> missing = missing(bridges);
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        List<String> args = new ArrayList<>(List.of("--zone=" + ZONE));
        missing.forEach(b -> args.add("--add-interface=" + b));
        Tool.Result r = tool.run(PROGRAM, args, null);
        if (r.exitCode() != 0) {
            throw failure("put bridge(s) " + String.join(", ", missing) + " in firewalld's zone " + ZONE, r);
        }
        return Optional.of("bridge(s) " + String.join(", ", missing) + " in firewalld's zone " + ZONE);
    }

    /** Takes a bridge out of the zone; one that is not there is no error. */
    void remove(String bridge) {
        Tool.Result r = tool.run(PROGRAM, List.of("--zone=" + ZONE, "--remove-interface=" + bridge), null);
        if (r.exitCode() != 0 && !r.stdout().contains("UNKNOWN_INTERFACE") && !r.stderr().contains("UNKNOWN_INTERFACE")) {
            throw failure("take bridge " + bridge + " out of firewalld's zone " + ZONE, r);
        }
    }

    private static GatunException failure(String operation, Tool.Result r) {
        String said = (r.stderr() + " " + r.stdout()).strip();
        return new GatunException("could not " + operation + ": " + PROGRAM + " exited " + r.exitCode()
                + (said.isEmpty() ? "" : ": " + said));
    }
}
