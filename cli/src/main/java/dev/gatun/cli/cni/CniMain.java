package dev.gatun.cli.cni;

import dev.gatun.cli.service.Drivers;
import dev.gatun.cli.wire.ServeClient;

import java.io.IOException;
import java.util.OptionalInt;

/**
 * The CNI plugin in a process of its own: the environment and stdin in, the plugin's stdout and
 * exit code out. Sent to the serve of this namespace when one runs (the launcher's C client
 * does that first; this is for a JVM path without it), else run here.
 */
public final class CniMain {

    private CniMain() {}

    /** Runs the call this process was started for; returns the exit code. */
    public static int run() {
        byte[] stdin;
        try {
            stdin = System.in.readAllBytes();
        } catch (IOException e) {
            stdin = new byte[0];
        }
        OptionalInt served = ServeClient.forwardCni(System.getenv(), stdin, System.out, System.err);
        if (served.isPresent()) {
            return served.getAsInt();
        }
        CniPlugin.Outcome o = CniPlugin.run(System.getenv(), stdin, Drivers.IN_PROCESS);
        try {
            System.out.write(o.stdout());
            System.out.flush();
            System.err.write(o.stderr());
            System.err.flush();
        } catch (IOException e) {
            return 1;
        }
        return o.exitCode();
    }
}
