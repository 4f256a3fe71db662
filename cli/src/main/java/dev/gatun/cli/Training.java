package dev.gatun.cli;

import dev.gatun.cli.command.CommandLines;
import dev.gatun.cli.serve.ServeWarmUp;
import dev.gatun.cli.serve.ThrowawayNamespaces;
import dev.gatun.cli.wire.ServeClient;
import dev.gatun.netns.NamedNamespaces;
import sun.misc.Signal;

import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The launcher's training run for the JVM's ahead-of-time cache. The JVM loads every class in
 * the cache when it starts, whether the command needs it or not, so the cache holds what the
 * one-shot commands a script or an engine runs per container need, and nothing more: the look
 * for a running serve that every JVM-path command makes first, then (as root) {@code net create},
 * {@code attach}, {@code publish}, {@code ls}, {@code unpublish}, {@code detach} and
 * {@code net rm} on throwaway namespaces it removes again; without root the read-only doctor.
 * With {@code --json} first, the same commands print JSON: the launcher keeps a second cache
 * for command lines with {@code --json}, as Jackson's classes in the one cache would slow every
 * other command's start (bench/README.md, "The JVM path's start-up measures"). With
 * {@code serve}, the serve's own training run instead, for the cache its launcher keeps with the
 * serve's flags (see {@link #serve}).
 */
public final class Training {

    /** A test network's prefix, inside the throwaway namespaces only. */
    private static final String SUBNET = ServeWarmUp.SUBNET;
    private static final String CONTAINER_IP = "10.213.0.2";

    private Training() {}

    public static void main(String[] args) {
        PrintWriter discard = new PrintWriter(OutputStream.nullOutputStream(), true);
        if (List.of(args).equals(List.of("serve"))) {
            System.exit(serve(discard));
        }
        // The look for a serve that finds none holds the start lock until this JVM exits: not before the serve's training.
        ServeClient.forward(new String[] {"ls"}, OutputStream.nullOutputStream(), OutputStream.nullOutputStream());
        boolean json = args.length > 0 && args[0].equals("--json");
        List<String> rest = List.of(args).subList(json ? 1 : 0, args.length);
        int code = rest.equals(List.of("commands")) ? commands(json, discard) : CommandLines.run(args, discard, discard);
        System.exit(code);
    }

    /**
     * The serve's training run (its cache is another, made with the serve's flags): a serve of a
     * throwaway namespace in this JVM, which before its ready line runs what a serve gets most
     * through its own request path (ServeWarmUp), then stopped as SIGTERM stops it. The JVM
     * writes the cache, with the profiles of that warm-up, as it exits.
     */
    static int serve(PrintWriter out) {
        String host = ThrowawayNamespaces.of("training-serve");
        try {
            NamedNamespaces.create(host);
            CountDownLatch ready = new CountDownLatch(1);
            // Its ready line comes after its warm-up.
            PrintWriter watched = new PrintWriter(new Writer() {
                @Override
                public void write(char[] chars, int from, int length) {
                    if (new String(chars, from, length).contains("ready")) {
                        ready.countDown();
                    }
                    out.write(chars, from, length);
                }

                @Override
                public void flush() {
                    out.flush();
                }

                @Override
                public void close() {
                }
            }, true);
            int[] code = {0};
            Thread serve = Thread.ofPlatform().name("gatun-training-serve").start(() -> {
                code[0] = CommandLines.run(new String[] {"--netns", host, "serve"}, watched, out);
                ready.countDown();
            });
            if (!ready.await(60, TimeUnit.SECONDS) || !serve.isAlive()) {
                return code[0] == 0 ? 1 : code[0];
            }
            Signal.raise(new Signal("TERM"));
            serve.join(TimeUnit.SECONDS.toMillis(30));
            return code[0];
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } finally {
            if (NamedNamespaces.exists(host)) {
                NamedNamespaces.delete(host);
            }
        }
    }

    /**
     * The per-container commands on a throwaway host and container namespace, printing JSON when
     * {@code json}, to {@code out}; the first exit code that is not 0.
     */
    static int commands(boolean json, PrintWriter out) {
        String host = ThrowawayNamespaces.of("training-host");
        String container = ThrowawayNamespaces.of("training-c");
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
                int code = CommandLines.run(line.toArray(String[]::new), out, out);
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
