package dev.gatun.netns;

import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.internal.Libc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A network namespace, identified by a file that refers to it: a name under /run/netns, or any
 * path such as /proc/PID/ns/net. Holding one keeps nothing open; tasks run inside it on
 * dedicated threads (see {@link #call(Callable)}), so it is safe to use from any thread,
 * virtual threads included.
 */
public final class NetworkNamespace {

    private static final NetworkNamespace CURRENT = new NetworkNamespace(Path.of("/proc/self/ns/net"), null);

    private final Path path;
    private final String name;

    private NetworkNamespace(Path path, String name) {
        this.path = path;
        this.name = name;
    }

    /** The namespace this process was started in (its main thread's). */
    public static NetworkNamespace current() {
        return CURRENT;
    }

    /** A namespace made by {@code ip netns add NAME} or {@link NamedNamespaces#create}. */
    public static NetworkNamespace named(String name) {
        Path p = NamedNamespaces.pathOf(name);
        if (!Files.exists(p)) {
            throw new InvalidInputException("network namespace " + name + " does not exist (no " + p + ")");
        }
        return verified(p, name);
    }

    /** The namespace that the file at {@code path} refers to, for example /proc/1234/ns/net. */
    public static NetworkNamespace at(Path path) {
        Objects.requireNonNull(path, "path");
        if (!Files.exists(path)) {
            throw new InvalidInputException("network namespace path " + path + " does not exist");
        }
        return verified(path, null);
    }

    /** A name under /run/netns, or an absolute or relative path when the argument contains '/'. */
    public static NetworkNamespace of(String nameOrPath) {
        Objects.requireNonNull(nameOrPath, "nameOrPath");
        return nameOrPath.contains("/") ? at(nameOrPath) : named(nameOrPath);
    }

    /** {@link #at(Path)} of a path given as text (an argument, a variable, a request's field). */
    public static NetworkNamespace at(String path) {
        return at(checkedPath(path));
    }

    /**
     * The file that a name (under /run/netns) or a path (with a '/') names, checked as
     * {@link #of} checks them, before anything is opened.
     */
    public static Path fileOf(String nameOrPath) {
        Objects.requireNonNull(nameOrPath, "nameOrPath");
        return nameOrPath.contains("/") ? checkedPath(nameOrPath) : NamedNamespaces.pathOf(nameOrPath);
    }

    private static Path checkedPath(String path) {
        Objects.requireNonNull(path, "path");
        try {
            return Path.of(path);
        } catch (InvalidPathException e) {
            // A NUL, or characters the file-name encoding cannot hold.
            throw new InvalidInputException("network namespace path '" + path + "' cannot be a path here ("
                    + e.getReason() + ")");
        }
    }

    private static NetworkNamespace verified(Path path, String name) {
        // Non-blocking: a FIFO given by mistake would otherwise wait for a writer, for ever.
        int fd = Libc.open(path.toString(), libc_h.O_RDONLY | libc_h.O_NONBLOCK);
        try {
            int type;
            try {
                type = Libc.namespaceType(fd, path.toString());
            } catch (GatunException e) {
                throw new InvalidInputException(path + " is not a network namespace (it is not a namespace file)");
            }
            if (type != libc_h.CLONE_NEWNET) {
                throw new InvalidInputException(path + " is a namespace, but not a network namespace");
            }
        } finally {
            Libc.close(fd);
        }
        return new NetworkNamespace(path, name);
    }

    /** The file that refers to this namespace. */
    public Path path() {
        return path;
    }

    /** The name under /run/netns, or null when the namespace was opened by path. */
    public String name() {
        return name;
    }

    /** The namespace's inode number: equal for two handles exactly when they are the same namespace. */
    public long inode() {
        try {
            return ((Number) Files.getAttribute(path, "unix:ino")).longValue();
        } catch (IOException e) {
            throw new GatunException("cannot read the inode of " + path + ": " + e.getMessage(), e);
        }
    }

    /** Whether this is the namespace that the process was started in. */
    public boolean isCurrent() {
        return this == CURRENT || inode() == CURRENT.inode();
    }

    /**
     * Runs the task with this namespace as the thread's network namespace and returns its
     * result. Sockets opened by the task stay in this namespace for their whole life.
     */
    public <T> T call(Callable<T> task) {
        if (this == CURRENT && !NamespaceSwitcher.isWorkerThread()) {
            // Only gatun's workers ever leave the process's namespace, so any other thread is in it.
            try {
                return task.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new GatunException("task in " + describe() + " failed: " + e, e);
            }
        }
        return NamespaceSwitcher.call(path.toString(), task);
    }

    /** Like {@link #call(Callable)} for a task without a result. */
    public void run(Runnable task) {
        call(() -> {
            task.run();
            return null;
        });
    }

    /** How errors and logs name this namespace. */
    public String describe() {
        if (this == CURRENT) {
            return "the current network namespace";
        }
        return name != null ? "network namespace " + name : "network namespace " + path;
    }

    @Override
    public String toString() {
        return describe();
    }
}
