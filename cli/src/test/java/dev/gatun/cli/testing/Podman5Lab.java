package dev.gatun.cli.testing;

import dev.gatun.netns.NetworkNamespace;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Podman 5 with netavark (Debian 13's, from the test bed) confined to one test: rootful, in the
 * test's host namespace, its storage, run and temporary directories and its network config
 * directory in a directory of the lab's own, netavark's plugin directory holding the plugin file
 * of {@code gatun netavark install}, runc and cgroupfs (cgroups v1 here), an image imported from
 * a busybox-static rootfs with a small UDP responder (nothing pulled). Optionally a {@code gatun
 * serve} inside the bed, which the plugin's calls then go through. {@link #close()} removes every
 * container and network and leaves the bed.
 */
public final class Podman5Lab implements AutoCloseable {

    public static final String IMAGE = "localhost/gatun-test/busybox:latest";

    public final NetworkNamespace host;
    /** Short: conmon's socket paths under it must fit in 108 bytes. */
    public final Path dir;
    public final Path plugins;
    public final DebianBed bed;
    private GatunServe serve;

    private Podman5Lab(NetworkNamespace host, Path dir, DebianBed bed) {
        this.host = host;
        this.dir = dir;
        this.plugins = dir.resolve("plugins");
        this.bed = bed;
    }

    /** How the lab's gatun runs: in a JVM per call, or forwarded to a serve without or with its warm-up. */
    public enum Gatun { IN_PROCESS, SERVED, SERVED_WARMED_UP }

    public static Podman5Lab start(NetworkNamespace host, boolean served) {
        return start(host, served ? Gatun.SERVED : Gatun.IN_PROCESS);
    }

    public static Podman5Lab start(NetworkNamespace host, Gatun gatun) {
        Path dir;
        try {
            dir = Files.createTempDirectory(Path.of("/tmp"), "gp5");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        DebianBed bed;
        try {
            bed = DebianBed.enter(host, List.of(dir));
        } catch (RuntimeException | Error e) {
            LabDirectory.remove(dir);
            throw e;
        }
        Podman5Lab lab = new Podman5Lab(host, dir, bed);
        try {
            lab.prepare(gatun);
            return lab;
        } catch (RuntimeException | Error e) {
            lab.close();
            throw e;
        }
    }

    private void prepare(Gatun gatun) {
        try {
            Files.createDirectories(dir.resolve("networks"));
            Files.writeString(dir.resolve("containers.conf"), conf(""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        GatunCli.ok("netavark", "install", "--plugin-dir", plugins.toString());
        importImage();
        if (gatun != Gatun.IN_PROCESS) {
            serve = GatunServe.startWith(bed.command(Map.of(), List.of()), List.of("serve", "--log-requests"), null,
                    gatun == Gatun.SERVED_WARMED_UP);
        }
    }

    /** The lab's containers.conf, with {@code network} lines added to its [network] section. */
    private String conf(String network) {
        return """
                    [network]
                    network_backend = "netavark"
                    netavark_plugin_dirs = ["%s"]
                    network_config_dir = "%s"
                    %s
                    [engine]
                    runtime = "runc"
                    cgroup_manager = "cgroupfs"
                    events_logger = "file"
                    [containers]
                    log_driver = "k8s-file"
                    """.formatted(plugins, dir.resolve("networks"), network);
    }

    /** A containers.conf of the lab with netavark's own firewall driver set to {@code driver} (nftables, iptables). */
    public Path confWithFirewall(String driver) {
        Path file = dir.resolve("containers-" + driver + ".conf");
        try {
            Files.writeString(file, conf("firewall_driver = \"" + driver + "\""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    private void importImage() {
        podmanOk("import", "--change", "CMD [\"/bin/sh\"]", BusyboxRootfs.tar(dir).toString(), IMAGE);
    }

    /** The serve the plugin's calls go through, or null. */
    public GatunServe serve() {
        return serve;
    }

    public DebianBed.Result podman(String... args) {
        return podmanWith(dir.resolve("containers.conf"), args);
    }

    /** Podman with another containers.conf of the lab's (same storage and networks). */
    public DebianBed.Result podmanWith(Path conf, String... args) {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/podman", "--root", dir.resolve("root").toString(),
                "--runroot", dir.resolve("run").toString(), "--tmpdir", dir.resolve("tmp").toString(),
                "--storage-driver", "vfs"));
        cmd.addAll(List.of(args));
        return bed.run(Map.of("CONTAINERS_CONF", conf.toString(),
                "PODMAN_IGNORE_CGROUPSV1_WARNING", "1"), Duration.ofSeconds(300), cmd);
    }

    public DebianBed.Result podmanOk(String... args) {
        DebianBed.Result r = podman(args);
        if (r.code() != 0) {
            throw new AssertionError("podman " + String.join(" ", args) + " exited " + r.code() + "\nstdout: " + r.out()
                    + "\nstderr: " + r.err());
        }
        return r;
    }

    /** {@code podman run -d} of the lab's image with {@code publish} as -p options. */
    public DebianBed.Result runDetached(String name, String network, List<String> publish, String... command) {
        List<String> args = new ArrayList<>(List.of("run", "-d", "--name", name, "--network", network));
        for (String p : publish) {
            args.add("-p");
            args.add(p);
        }
        args.add(IMAGE);
        args.addAll(List.of(command));
        return podman(args.toArray(String[]::new));
    }

    /** A command in the bed (its mounts, the host's network namespace). */
    public DebianBed.Result inBed(String... command) {
        return bed.run(Map.of(), Duration.ofSeconds(60), List.of(command));
    }

    /** The plugin file, run in the bed as netavark runs it, with {@code stdin}. */
    public DebianBed.Result plugin(String stdin, String... args) {
        Path in = dir.resolve("stdin.json");
        try {
            Files.writeString(in, stdin);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> cmd = new ArrayList<>(List.of("/bin/sh", "-c", "exec \"$0\" \"$@\" < " + in, plugins.resolve("gatun")
                .toString()));
        cmd.addAll(List.of(args));
        return bed.run(Map.of(), Duration.ofSeconds(120), cmd);
    }

    @Override
    public void close() {
        AssertionError failure = null;
        try {
            if (Files.isDirectory(dir.resolve("root"))) {
                DebianBed.Result rm = podman("rm", "-a", "-f", "-t", "0");
                if (rm.code() != 0) {
                    failure = new AssertionError("podman rm -af failed: " + rm.err());
                }
            }
            if (serve != null) {
                serve.close();
            }
        } catch (RuntimeException | Error e) {
            failure = new AssertionError("cleaning the Podman 5 lab failed", e);
        } finally {
            try {
                bed.close();
            } catch (AssertionError e) {
                failure = failure != null ? failure : e;
            }
            LabDirectory.remove(dir);
        }
        if (failure != null) {
            throw failure;
        }
    }
}
