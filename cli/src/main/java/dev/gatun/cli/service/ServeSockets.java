package dev.gatun.cli.service;

import dev.gatun.netns.NetworkNamespace;

import java.nio.file.Path;

/**
 * Where serves listen: two sockets per namespace served, the local API's and the one-shot
 * calls' (the C client's), named by the namespace's inode so that a client finds the serve of
 * its namespace with a stat and no round trip. Apart from
 * {@link LocalApi} on purpose: a one-shot command that only looks for a serve then loads no
 * HTTP server, whose first class starts a logging framework (some 100 classes of each JVM start).
 */
public final class ServeSockets {

    /** Where every serve's socket lives: made 0700, root only. */
    public static final Path DIR = Path.of("/run/gatun");

    private ServeSockets() {}

    /** The socket of the serve for {@code ns}. */
    public static Path of(NetworkNamespace ns) {
        return of(ns.inode());
    }

    /** The socket of the serve for the namespace with inode {@code inode}. */
    static Path of(long inode) {
        return DIR.resolve("netns-" + inode + ".sock");
    }

    /** The one-shot socket of the serve for {@code ns} (see {@link ServeWire}). */
    public static Path oneShotOf(NetworkNamespace ns) {
        return oneShotOf(ns.inode());
    }

    /** The one-shot socket of the serve for the namespace with inode {@code inode}. */
    public static Path oneShotOf(long inode) {
        return DIR.resolve("netns-" + inode + ".calls.sock");
    }

    /** The local API's socket of the serve whose one-shot socket is {@code calls}. */
    public static Path apiBeside(Path calls) {
        String name = calls.getFileName().toString();
        return calls.resolveSibling(name.substring(0, name.length() - ".calls.sock".length()) + ".sock");
    }
}
