package dev.gatun.cli.wire;

import dev.gatun.cli.service.ServeSockets;
import dev.gatun.EnvironmentException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Keeps a serve from starting while a one-shot command changes its namespace in a JVM of its
 * own. A serve reads the kernel when it starts and from then on puts back what someone else
 * removes: a command that found no serve and then committed an unpublish just after a serve
 * read the kernel would be undone by that serve's repair, after it had reported success (say,
 * while a serve that was killed is restarted and the launcher runs commands in new JVMs). So
 * the JVM path holds the lock shared while it runs a command itself, and a serve holds it alone
 * from before it reads the kernel until its socket answers; a command that had to wait looks
 * for a serve again. One file for every namespace, so none is left behind per namespace: a
 * serve starting may wait for a command of another namespace, a rare and short wait. The
 * kernel lets go of a lock when its process dies, also of SIGKILL, so nothing is left held.
 */
public final class StartLock implements AutoCloseable {

    private final FileChannel channel;

    private StartLock(FileChannel channel) {
        this.channel = channel;
    }

    static final Path FILE = ServeSockets.DIR.resolve("start.lock");

    private static StartLock acquire(boolean shared) throws IOException {
        Path file = FILE;
        if (!Files.isDirectory(file.getParent())) {
            Files.createDirectories(file.getParent(),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        }
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.READ);
        try {
            channel.lock(0, Long.MAX_VALUE, shared);
            return new StartLock(channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** Shared, for a command run in this JVM; null when it cannot be had (no serve can start then either: no root). */
    static StartLock forCommand() {
        try {
            return acquire(true);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Alone, for a serve that is starting: waits for the commands running in JVMs of their own. */
    public static StartLock forServe() {
        try {
            return acquire(false);
        } catch (IOException e) {
            throw new EnvironmentException("cannot lock " + FILE + ": " + e.getMessage());
        }
    }

    @Override
    public void close() {
        try {
            channel.close(); // releases the lock
        } catch (IOException ignored) {
            // the lock goes with the process at the latest
        }
    }
}
