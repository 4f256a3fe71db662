package dev.gatun.cli.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Streams;
import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The test bed of today's engines (Podman 5, netavark, dockerd 26, containerd 1.7, firewalld 2):
 * the Debian 13 root that {@code ci/testbed} makes, entered for one test. One holder process
 * ({@code nsenter --net} into the test's namespace, {@code unshare -m} with private propagation,
 * then {@code pivot_root} into the bed, the host's root unmounted) keeps a mount namespace in which the root is bound onto itself and gets a
 * fresh /proc, the test namespace's /sys, the host's /dev and cgroups, a tmpfs /run and /tmp, and
 * the checkout, the JDK and the test's own directories at the same paths, so that an engine
 * inside runs gatun's launcher as it runs any plugin. Every command runs in it with
 * {@code nsenter -t HOLDER -m -n -r -w}. Nothing it mounts is seen outside it, and all of it
 * goes when {@link #close()} has stopped every process in that mount namespace.
 */
public final class DebianBed implements AutoCloseable {

    public static final Path ROOT = Path.of(System.getenv().getOrDefault("GATUN_TESTBED", "/var/cache/gatun/testbed"),
            "trixie");
    private static final Duration OUTPUT_OPEN = Duration.ofSeconds(10);
    private static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    public record Result(int code, String out, String err) {}

    private final Process holder;
    private final String mountNamespace;

    private DebianBed(Process holder) throws IOException {
        this.holder = holder;
        this.mountNamespace = Files.readSymbolicLink(Path.of("/proc", Long.toString(holder.pid()), "ns", "mnt")).toString();
    }

    /** Enters the bed in {@code host}'s network namespace, with {@code binds} (absolute paths) bound at the same paths. */
    public static DebianBed enter(NetworkNamespace host, List<Path> binds) {
        FreshNamespaces.requirePrivileges();
        if (!Files.isExecutable(ROOT.resolve("usr/bin/podman"))) {
            String why = "the test bed of today's engines is not made (" + ROOT + "); ci/setup makes it with ci/testbed";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why);
            }
            Assumptions.abort(why);
        }
        Set<Path> all = new LinkedHashSet<>();
        all.add(GatunCli.ROOT);
        all.add(Path.of(System.getProperty("java.home")).toAbsolutePath().normalize());
        all.addAll(binds);
        StringBuilder script = new StringBuilder("set -e\nR='" + ROOT + "'\n");
        script.append("""
                mount --bind "$R" "$R"
                mount -t proc proc "$R/proc"
                mount -t sysfs sysfs "$R/sys"
                mount --rbind /sys/fs/cgroup "$R/sys/fs/cgroup"
                mount --rbind /dev "$R/dev"
                mount -t tmpfs -o mode=755 tmpfs "$R/run"
                mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
                """);
        for (Path p : all) {
            if (!p.isAbsolute() || p.toString().contains("'")) {
                throw new IllegalArgumentException("cannot bind " + p + " into the bed");
            }
            script.append("mkdir -p \"$R\"'").append(p).append("'\nmount --bind '").append(p).append("' \"$R\"'")
                    .append(p).append("'\n");
        }
        // pivot_root, not chroot: runc pivots the root of the mount namespace it is in, and under a
        // mere chroot that root is the host's, which a container would then run on.
        script.append("""
                cd "$R"
                mkdir -p .gatun-oldroot
                pivot_root . .gatun-oldroot
                cd /
                exec /bin/busybox sh -c 'umount -l /.gatun-oldroot && echo ready && exec /bin/sleep infinity'
                """);
        ProcessBuilder pb = new ProcessBuilder("nsenter", "--net=" + host.path(), "unshare", "-m", "--propagation",
                "private", "--", "sh", "-c", script.toString());
        pb.redirectErrorStream(true);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            StringBuilder said = new StringBuilder();
            for (String line; (line = out.readLine()) != null; ) {
                if (line.equals("ready")) {
                    return new DebianBed(p);
                }
                said.append(line).append('\n');
            }
            p.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("cannot enter the test bed " + ROOT + ": " + said);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** {@code args} as a command line that runs in the bed, in a clean environment plus {@code env}. */
    public List<String> command(Map<String, String> env, List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "-t", Long.toString(holder.pid()), "-m", "-n", "-r", "-w",
                "--", "/usr/bin/env", "-i", "PATH=" + PATH, "HOME=/root", "LANG=C.UTF-8"));
        env.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.addAll(args);
        return cmd;
    }

    /**
     * The bed's root seen from outside it, through its holder's /proc entry: with the mounts made
     * in the bed, a network namespace's file under /run/netns among them.
     */
    public Path root() {
        return Path.of("/proc", Long.toString(holder.pid()), "root");
    }

    /** Runs {@code args} in the bed and waits for it (at most {@code limit}). */
    public Result run(Map<String, String> env, Duration limit, List<String> args) {
        List<String> cmd = command(env, args);
        try {
            Process p = new ProcessBuilder(cmd).start();
            p.getOutputStream().close();
            CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
            CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError(args + " in the test bed did not finish within " + limit);
            }
            return new Result(p.exitValue(), Bounded.get(out, OUTPUT_OPEN, "stdout after the exit"),
                    Bounded.get(err, OUTPUT_OPEN, "stderr after the exit"));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The processes in the bed's mount namespace, the holder included. */
    public List<ProcessHandle> processes() {
        List<ProcessHandle> out = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().matches("[0-9]+")).toList()) {
                try {
                    if (Files.readSymbolicLink(p.resolve("ns/mnt")).toString().equals(mountNamespace)) {
                        ProcessHandle.of(Long.parseLong(p.getFileName().toString())).ifPresent(out::add);
                    }
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** Stops every process in the bed (TERM, then KILL); with the last, its mounts go. */
    @Override
    public void close() {
        for (int round = 0; round < 2; round++) {
            List<ProcessHandle> left = processes().stream().filter(h -> h.pid() != holder.pid()).toList();
            left.forEach(round == 0 ? ProcessHandle::destroy : ProcessHandle::destroyForcibly);
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (left.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < until) {
                sleep(20);
            }
        }
        holder.destroyForcibly();
        try {
            if (!holder.waitFor(10, TimeUnit.SECONDS)) {
                throw new AssertionError("the test bed's holder " + holder.pid() + " did not stop");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<ProcessHandle> left = processes();
        if (!left.isEmpty()) {
            throw new AssertionError("processes left in the test bed: " + left.stream().map(ProcessHandle::pid).toList());
        }
        // Its mounts were private to its namespace; one that propagated to this one would outlive it.
        try {
            List<String> leaked = Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                    .filter(l -> l.contains(" " + ROOT + "/") || l.contains(" " + ROOT + " ")).toList();
            if (!leaked.isEmpty()) {
                throw new AssertionError("mounts of the test bed left in the host's mount namespace: " + leaked);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
