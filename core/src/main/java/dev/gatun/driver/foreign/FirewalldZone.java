package dev.gatun.driver.foreign;

import dev.gatun.GatunException;
import dev.gatun.internal.Tool;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * firewalld's {@code trusted} zone, through firewalld's own interface ({@code firewall-cmd},
 * which speaks D-Bus to the daemon): gatun's bridges are put in it at run time, never in the
 * permanent configuration, as Podman does. A reload forgets them; repair puts them back.
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

    /** The bridges not in the zone now. */
    List<String> missing(List<String> bridges) {
        List<String> out = new ArrayList<>();
        for (String b : bridges) {
            Tool.Result r = tool.run(PROGRAM, List.of("--zone=" + ZONE, "--query-interface=" + b), null);
            if (r.exitCode() == 1) {
                out.add(b);
            } else if (r.exitCode() != 0) {
                throw failure("ask firewalld whether " + b + " is in zone " + ZONE, r);
            }
        }
        return out;
    }

    /** Puts the missing bridges in the zone; returns what it changed. */
    Optional<String> add(List<String> bridges) {
        List<String> missing = missing(bridges);
        for (String b : missing) {
            Tool.Result r = tool.run(PROGRAM, List.of("--zone=" + ZONE, "--add-interface=" + b), null);
            if (r.exitCode() != 0) {
                throw failure("put bridge " + b + " in firewalld's zone " + ZONE, r);
            }
        }
        return missing.isEmpty() ? Optional.empty()
                : Optional.of("bridge(s) " + String.join(", ", missing) + " in firewalld's zone " + ZONE);
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
