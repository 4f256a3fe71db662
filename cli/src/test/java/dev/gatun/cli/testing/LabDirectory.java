package dev.gatun.cli.testing;

import dev.gatun.testing.Oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Removing an engine lab's directory. An engine's helpers may still write into it after the
 * engine said its containers are gone (conmon runs {@code podman container cleanup} when a
 * container exits, which made the lab's run and tmp directories again after a removal), so
 * removal first waits for every process whose command line names the directory, then is tried
 * again for a while; what stays, and which processes still hold it, is named in the failure.
 */
public final class LabDirectory {

    private static final long PATIENCE_MILLIS = 15_000;

    private LabDirectory() {}

    /** Mount points below {@code dir} (not {@code dir} itself), in the order they were mounted. */
    public static List<String> mountsUnder(Path dir) {
        try {
            List<String> targets = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                String target = line.split(" ")[4].replace("\\040", " ");
                if (target.startsWith(dir + "/")) {
                    targets.add(target);
                }
            }
            return targets;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Detaches what is mounted below {@code dir}, then deletes it and all it holds. */
    public static void remove(Path dir) {
        awaitHelpersOf(dir);
        for (String target : mountsUnder(dir).reversed()) {
            Oracle.run(List.of("umount", "-l", target));
        }
        long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
        Exception last;
        do {
            try {
                deleteTree(dir);
                return;
            } catch (IOException | UncheckedIOException e) {
                last = e; // a file written or removed while the tree was walked
            }
            pause();
        } while (System.currentTimeMillis() < deadline);
        throw new AssertionError("cannot remove " + dir + " in " + PATIENCE_MILLIS / 1000 + " s; left: " + left(dir)
                + "; processes holding it: " + holders(dir), last);
    }

    /** Waits for the processes naming {@code dir} on their command line to end; kills what is left after the patience. */
    private static void awaitHelpersOf(Path dir) {
        long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
        List<ProcessHandle> left = helpersOf(dir);
        while (!left.isEmpty() && System.currentTimeMillis() < deadline) {
            pause();
            left = helpersOf(dir);
        }
        left.forEach(ProcessHandle::destroyForcibly);
        left.forEach(p -> p.onExit().orTimeout(5, TimeUnit.SECONDS).exceptionally(t -> p).join());
    }

    private static List<ProcessHandle> helpersOf(Path dir) {
        String named = dir.toString();
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self && p.info().commandLine().map(c -> c.contains(named)).orElse(false))
                .toList();
    }

    private static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) { // does not follow symlinks
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static List<String> left(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            return all.limit(10).map(Path::toString).toList();
        } catch (IOException | UncheckedIOException e) {
            return List.of("(cannot be listed: " + e.getMessage() + ")");
        }
    }

    /** Processes whose working directory or an open file is under {@code dir}, as "pid (comm)". */
    private static List<String> holders(Path dir) {
        List<String> found = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path proc : procs) {
                if (holds(proc, dir)) {
                    found.add(proc.getFileName() + " (" + comm(proc) + ")");
                }
            }
        } catch (IOException e) {
            found.add("(cannot read /proc: " + e.getMessage() + ")");
        }
        return found;
    }

    private static boolean holds(Path proc, Path dir) {
        try {
            if (Files.readSymbolicLink(proc.resolve("cwd")).startsWith(dir)) {
                return true;
            }
            try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
                for (Path fd : fds) {
                    if (Files.readSymbolicLink(fd).startsWith(dir)) {
                        return true;
                    }
                }
            }
        } catch (IOException | SecurityException e) {
            return false; // the process is gone, or not ours to read
        }
        return false;
    }

    private static String comm(Path proc) {
        try {
            return Files.readString(proc.resolve("comm")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    private static void pause() {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while removing a lab's directory", e);
        }
    }
}
