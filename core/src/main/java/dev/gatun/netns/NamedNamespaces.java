package dev.gatun.netns;

import dev.gatun.ErrnoException;
import dev.gatun.GatunException;
import dev.gatun.InvalidInputException;
import dev.gatun.bindings.internal.libc_h;
import dev.gatun.internal.Errno;
import dev.gatun.internal.Libc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;

/**
 * Named network namespaces under /run/netns, made and removed the way {@code ip netns add} and
 * {@code ip netns del} do, so iproute2 and gatun see the same names.
 */
public final class NamedNamespaces {

    /** Where iproute2 keeps named namespaces. */
    public static final Path DIRECTORY = Path.of("/run/netns");

    private NamedNamespaces() {}

    /** Creates an empty network namespace with this name and returns it. Fails if the name exists. */
    public static NetworkNamespace create(String name) {
        Path target = pathOf(name);
        makeMountPointDirectory();
        try {
            Files.createFile(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("---------")));
        } catch (FileAlreadyExistsException e) {
            throw new NamespaceExistsException(name);
        } catch (IOException e) {
            throw new GatunException("create network namespace " + name + ": cannot create " + target + ": " + e.getMessage(), e);
        }
        try {
            // The bind mount keeps the new namespace alive after the thread leaves it.
            NamespaceSwitcher.callInNewNamespace(() -> {
                Libc.mount("/proc/thread-self/ns/net", target.toString(), libc_h.MS_BIND,
                        "create network namespace " + name + " (bind mount to " + target + ")");
                return null;
            });
            return NetworkNamespace.named(name);
        } catch (RuntimeException e) {
            // Not left behind half made: unmounted (if it was) and removed.
            Libc.umount2(target.toString(), libc_h.MNT_DETACH);
            deleteQuietly(target);
            throw e;
        }
    }

    /** Removes the named namespace. Its interfaces go away once nothing else holds it. */
    public static void delete(String name) {
        Path target = pathOf(name);
        if (!Files.exists(target)) {
            throw new InvalidInputException("network namespace " + name + " does not exist (no " + target + ")");
        }
        int err = Libc.umount2(target.toString(), libc_h.MNT_DETACH);
        if (err != 0 && err != libc_h.EINVAL) { // EINVAL: not mounted, only the file is left
            throw Errno.exception("delete network namespace " + name + " (unmount " + target + ")", err);
        }
        try {
            Files.deleteIfExists(target);
        } catch (IOException e) {
            throw new GatunException("delete network namespace " + name + ": cannot remove " + target + ": " + e.getMessage(), e);
        }
    }

    /** Whether a namespace with this name exists. */
    public static boolean exists(String name) {
        return Files.exists(pathOf(name));
    }

    /** The names under /run/netns, sorted. */
    public static List<String> list() {
        if (!Files.isDirectory(DIRECTORY)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(DIRECTORY)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new GatunException("list " + DIRECTORY + ": " + e.getMessage(), e);
        }
    }

    /** The file for a name, after checking that the name is one file name the kernel accepts. */
    public static Path pathOf(String name) {
        validateName(name);
        try {
            return DIRECTORY.resolve(name);
        } catch (InvalidPathException e) {
            // Characters the file-name encoding cannot hold (an unpaired surrogate; non-ASCII in a C locale).
            throw new InvalidInputException("network namespace name '" + name + "' cannot be a file name here ("
                    + e.getReason() + ")");
        }
    }

    /** Refuses names that are not a single, sane file name under /run/netns. */
    public static void validateName(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidInputException("network namespace name must not be empty");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new InvalidInputException("network namespace name '" + name + "' is not allowed");
        }
        if (name.indexOf('/') >= 0) {
            throw new InvalidInputException("network namespace name '" + name + "' must not contain '/'");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isISOControl(c) || Character.isWhitespace(c)) {
                throw new InvalidInputException("network namespace name '" + name.replaceAll("\\p{Cntrl}", "?")
                        + "' must not contain whitespace or control characters");
            }
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > libc_h.NAME_MAX) {
            throw new InvalidInputException("network namespace name '" + name + "' is " + bytes
                    + " bytes long; the kernel allows at most " + libc_h.NAME_MAX);
        }
    }

    /**
     * Makes /run/netns a mount point with shared propagation, as iproute2 does, so namespaces
     * mounted here are visible in mount namespaces created later (ip netns exec).
     */
    private static void makeMountPointDirectory() {
        try {
            Files.createDirectories(DIRECTORY);
        } catch (IOException e) {
            throw new GatunException("cannot create " + DIRECTORY + ": " + e.getMessage(), e);
        }
        String dir = DIRECTORY.toString();
        try {
            Libc.mount("", dir, libc_h.MS_SHARED | libc_h.MS_REC, "make " + dir + " a shared mount");
        } catch (ErrnoException e) {
            if (e.errno() != libc_h.EINVAL) {
                throw e;
            }
            // Not a mount point yet: bind it onto itself, then share it.
            Libc.mount(dir, dir, libc_h.MS_BIND | libc_h.MS_REC, "bind mount " + dir + " onto itself");
            Libc.mount("", dir, libc_h.MS_SHARED | libc_h.MS_REC, "make " + dir + " a shared mount");
        }
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // the original failure is what the caller needs to see
        }
    }
}
