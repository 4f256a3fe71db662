package dev.gatun.cli.http;

import dev.gatun.EnvironmentException;
import jdk.net.ExtendedSocketOptions;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.attribute.UserPrincipal;

/**
 * Lets through the connections of processes that run as root: uid 0 by SO_PEERCRED, compared
 * by number, not by name. The JDK looks the peer's name up for each connection, and where that
 * fails (no descriptor left to read /etc/passwd) it gives the number instead; a principal
 * compares by uid either way.
 */
public final class RootPeers {

    private final UserPrincipal root;

    private RootPeers(UserPrincipal root) {
        this.root = root;
    }

    /**
     * Made once, when a server starts, while a descriptor is to be had for the lookup: uid 0 is
     * looked up as "0", which names no user and so reads as the number.
     */
    public static RootPeers lookUp() {
        try {
            return new RootPeers(FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("0"));
        } catch (IOException e) {
            throw new EnvironmentException("cannot look up uid 0, to let only root's processes call: " + e.getMessage());
        }
    }

    /** Whether the process at the other end of {@code c} runs as root; false when the kernel does not say. */
    public boolean allow(SocketChannel c) {
        try {
            return root.equals(c.getOption(ExtendedSocketOptions.SO_PEERCRED).user());
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }
}
