package dev.gatun.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What a test that runs strace over a process needs to know before it acts: that strace holds every thread. */
public final class Tracing {

    private Tracing() {}

    /** Whether {@code tracer} (strace's pid) traces every thread of {@code pid} (TracerPid in each task's status). */
    public static boolean everyThreadTraced(long pid, long tracer) {
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            return tasks.allMatch(t -> {
                try {
                    return Files.readAllLines(t.resolve("status")).contains("TracerPid:\t" + tracer);
                } catch (IOException e) {
                    return true; // a thread that ended meanwhile
                }
            });
        } catch (IOException e) {
            return false;
        }
    }
}
