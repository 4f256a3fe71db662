package dev.gatun.sockdiag;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which processes hold sockets, found as {@code ss -p} finds them: every /proc/PID/fd entry
 * that links to {@code socket:[INODE]}, and that process's name from /proc/PID/comm. Socket
 * inodes are unique across namespaces, so processes of any namespace are found. {@link #of}
 * reads every process's descriptors: meant for an error message or a report, not a hot path;
 * {@link #heldBy} reads only those of processes with a given name. A process that ends while it
 * is read is skipped.
 */
public final class SocketOwners {

    private static final Path PROC = Path.of("/proc");

    private SocketOwners() {}

    /** For each inode of {@code inodes} that a process holds: "NAME (pid PID)", the first such process found. */
    public static Map<Long, String> of(Set<Long> inodes) {
        Map<Long, String> described = new HashMap<>();
        holders(inodes).forEach((inode, process) -> described.put(inode, name(process) + " (pid " + process.getFileName() + ")"));
        return described;
    }

    /**
     * The inodes of {@code inodes} that a process named one of {@code commands} (/proc/PID/comm)
     * holds, whoever else holds them too (a socket the engine holds is its reservation). Only
     * those processes' descriptors are read, newest process first: an engine's reservation of a
     * port is held by the engine process that asked for the port a moment ago (Podman's, the
     * parent of its netavark call), so a reservation costs the list of /proc, the names of the
     * few processes newer than that one and its descriptors, where reading every process's
     * descriptors cost some 2.5 ms with 70 processes and grew with each container. A socket
     * that no such process holds (a port another program holds) costs every name and the
     * descriptors of every process so named.
     */
    public static Set<Long> heldBy(Set<Long> inodes, Set<String> commands) {
        Map<Long, Path> found = new HashMap<>();
        if (inodes.isEmpty() || commands.isEmpty()) {
            return found.keySet();
        }
        for (long pid : newestFirst()) {
            Path process = PROC.resolve(Long.toString(pid));
            if (commands.contains(name(process))) {
                scan(process, inodes, found);
                if (found.size() == inodes.size()) {
                    break;
                }
            }
        }
        return found.keySet();
    }

    /** The process ids in /proc, highest first (newest, unless the ids wrapped around). */
    private static List<Long> newestFirst() {
        List<Long> pids = new ArrayList<>();
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, p -> isPid(p.getFileName().toString()))) {
            for (Path process : processes) {
                pids.add(Long.parseLong(process.getFileName().toString()));
            }
        } catch (IOException | NumberFormatException e) {
            // /proc unreadable: no process is found, and the caller refuses the port as held.
        }
        pids.sort(Comparator.reverseOrder());
        return pids;
    }

    /** For each inode held: the /proc directory of the first process found holding it. */
    private static Map<Long, Path> holders(Set<Long> inodes) {
        Map<Long, Path> found = new HashMap<>();
        if (inodes.isEmpty()) {
            return found;
        }
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(PROC, p -> isPid(p.getFileName().toString()))) {
            for (Path process : processes) {
                scan(process, inodes, found);
                if (found.size() == inodes.size()) {
                    break;
                }
            }
        } catch (IOException e) {
            // /proc unreadable: the caller names the sockets by inode instead.
        }
        return found;
    }

    private static void scan(Path process, Set<Long> inodes, Map<Long, Path> found) {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(process.resolve("fd"))) {
            for (Path fd : fds) {
                long inode = socketInode(fd);
                if (inode >= 0 && inodes.contains(inode) && !found.containsKey(inode)) {
                    found.put(inode, process);
                }
            }
        } catch (IOException | SecurityException e) {
            // Gone meanwhile, or not ours to read.
        }
    }

    private static long socketInode(Path fd) {
        try {
            String target = Files.readSymbolicLink(fd).toString();
            if (target.startsWith("socket:[") && target.endsWith("]")) {
                return Long.parseLong(target, 8, target.length() - 1, 10);
            }
        } catch (IOException | NumberFormatException e) {
            // Closed meanwhile, or not a socket.
        }
        return -1;
    }

    private static String name(Path process) {
        try {
            // procfs reports a size of 0, so read to the end rather than by size.
            try (InputStream in = Files.newInputStream(process.resolve("comm"))) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
            }
        } catch (IOException e) {
            return "a process";
        }
    }

    private static boolean isPid(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (!Character.isDigit(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
