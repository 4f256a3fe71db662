package dev.gatun.cli;

import dev.gatun.cli.api.ServeClient;
import dev.gatun.netns.NamedNamespaces;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * The launcher's training run for the JVM's ahead-of-time cache. The JVM loads every class in
 * the cache when it starts, whether the command needs it or not, so the cache holds what the
 * one-shot commands a script or an engine runs per container need, and nothing more: the look
 * for a running serve that every JVM-path command makes first, then (as root) {@code net create},
 * {@code attach}, {@code publish}, {@code ls}, {@code unpublish}, {@code detach} and
 * {@code net rm} on throwaway namespaces it removes again; without root the read-only doctor.
 * With {@code --json} first, the same commands print JSON: the launcher keeps a second cache
 * for command lines with {@code --json}, as Jackson's classes in the one cache would slow every
 * other command's start (bench/README.md, "The JVM path's start-up measures").
 */
public final class Training {

    /** A test network's prefix, inside the throwaway namespace only. */
    private static final String SUBNET = "10.213.0.0/24";
    private static final String CONTAINER_IP = "10.213.0.2";

    private Training() {}

    public static void main(String[] args) {
        ServeClient.forward(new String[] {"ls"}, OutputStream.nullOutputStream(), OutputStream.nullOutputStream());
        PrintWriter discard = new PrintWriter(OutputStream.nullOutputStream(), true);
        boolean json = args.length > 0 && args[0].equals("--json");
        List<String> rest = List.of(args).subList(json ? 1 : 0, args.length);
        int code = rest.equals(List.of("commands")) ? commands(json, discard) : Main.run(args, discard, discard);
        System.exit(code);
    }

    /**
     * The per-container commands on a throwaway host and container namespace, printing JSON when
     * {@code json}, to {@code out}; the first exit code that is not 0.
     */
    static int commands(boolean json, PrintWriter out) {
        String tag = Long.toString(ProcessHandle.current().pid());
        String host = "gatun-training-host-" + tag;
        String container = "gatun-training-c-" + tag;
        try {
            NamedNamespaces.create(host);
            NamedNamespaces.create(container);
            List<String[]> commands = List.of(
                    new String[] {"net", "create", "t1", "--subnet", SUBNET},
                    new String[] {"attach", "t1", container, "--ip", CONTAINER_IP},
                    new String[] {"publish", "t1", CONTAINER_IP, "-p", "8080:80/tcp"},
                    new String[] {"ls"},
                    new String[] {"unpublish", "t1", CONTAINER_IP, "-p", "8080:80/tcp"},
                    new String[] {"detach", "t1", container},
                    new String[] {"net", "rm", "t1"});
            for (String[] command : commands) {
                List<String> line = new ArrayList<>(json ? List.of("--json", "--netns", host) : List.of("--netns", host));
                line.addAll(List.of(command));
                int code = Main.run(line.toArray(String[]::new), out, out);
                if (code != 0) {
                    return code;
                }
            }
            return 0;
        } finally {
            for (String name : List.of(container, host)) {
                if (NamedNamespaces.exists(name)) {
                    NamedNamespaces.delete(name);
                }
            }
        }
    }
}
