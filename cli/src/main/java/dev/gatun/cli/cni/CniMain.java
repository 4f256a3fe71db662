package dev.gatun.cli.cni;

import java.io.IOException;

/** The CNI plugin in a process of its own: the environment and stdin in, the plugin's stdout and exit code out. */
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
        CniPlugin.Outcome o = CniPlugin.run(System.getenv(), stdin, CniPlugin.IN_PROCESS);
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
