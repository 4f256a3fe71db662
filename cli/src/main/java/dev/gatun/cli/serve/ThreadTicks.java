package dev.gatun.cli.serve;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time of this JVM's threads, in clock ticks, from {@code /proc/self/task}, split into the
 * JIT compiler threads and all the others: the serve tells from it when its compilers have
 * caught up (its warm-up) and when a burst of work is over (its heap keeper), without the
 * management API (some 300 classes in an idle serve).
 */
final class ThreadTicks {

    private static final Path TASKS = Path.of("/proc/self/task");

    private ThreadTicks() {}

    /** utime + stime of the threads HotSpot names "C1 CompilerThreadN" and "C2 CompilerThreadN"; -1 if unreadable. */
    static long compilers() {
        return sum(true);
    }

    /** utime + stime of every thread but the JIT compilers, which go on compiling for seconds after a burst; -1 if unreadable. */
    static long allButCompilers() {
        return sum(false);
    }

    private static long sum(boolean compilers) {
        long sum = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue; // the thread ended
                }
                if (isCompiler(stat) == compilers) {
                    sum += ticksOf(stat);
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Whether a {@code stat} line's name (its second field, in parentheses) is a JIT compiler thread's. */
    static boolean isCompiler(String stat) {
        String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        return comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler");
    }

    /**
     * utime (14th field) + stime (15th) of a {@code stat} line; the name in parentheses (2nd)
     * may hold spaces, so fields are counted from its closing parenthesis.
     */
    static long ticksOf(String stat) {
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // after[0] is the 3rd field (state): utime is after[11], stime after[12].
        return Long.parseLong(after[11]) + Long.parseLong(after[12]);
    }
}
