package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Streams;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Debian's Podman 4.3 (rootful, CNI backend) confined to one test: started inside the test's
 * host namespace with {@code nsenter --net}, its storage, run and temporary directories and its
 * CNI config directory in a directory of the lab's own, its plugin directories (gatun's link
 * from {@code gatun cni install}, then the reference plugins) from a {@code CONTAINERS_CONF} file
 * of the lab's own. One image, {@link #IMAGE}: a busybox-static rootfs imported with
 * {@code podman import} (nothing is pulled), plus {@code /bin/udpreply PORT TEXT}. On
 * {@link #close()} every container goes, and what libcni keeps in /var/lib/cni for the lab's
 * networks (its result cache, which Podman 4.3 cannot move) is removed, with the directories it
 * made there when they did not exist before.
 */
public final class PodmanLab implements AutoCloseable {

    /** How long a command's output may stay open after it exited (a child it left may hold it). */
    private static final Duration OUTPUT_OPEN = Duration.ofSeconds(10);

    public static final String IMAGE = "localhost/gatun-test/busybox:latest";
    public static final Path PLUGINS = Path.of("/usr/lib/cni");
    private static final Path VAR_LIB_CNI = Path.of("/var/lib/cni");

    public record Result(int code, String out, String err) {}

    public final NetworkNamespace host;
    /** Short: conmon's socket paths under it must fit in 108 bytes. */
    public final Path dir;
    public final Path bin;
    public final Path cniDir;
    private final List<Path> madeInVarLibCni = new ArrayList<>();
    private final List<String> networks = new ArrayList<>();

    private PodmanLab(NetworkNamespace host, Path dir) {
        this.host = host;
        this.dir = dir;
        this.bin = dir.resolve("bin");
        this.cniDir = dir.resolve("cni");
    }

    public static PodmanLab start(NetworkNamespace host) {
        FreshNamespaces.requirePrivileges();
        Requirements.require("the Podman tests need podman, runc, containernetworking-plugins, busybox-static, gcc, "
                        + "tar, chroot and curl", List.of("podman", "runc", "nsenter", "gcc", "tar", "chroot", "curl"),
                List.of(PLUGINS.resolve("host-local"), Path.of("/bin/busybox")));
        Path dir;
        try {
            dir = Files.createTempDirectory(Path.of("/tmp"), "gpm");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        PodmanLab lab = new PodmanLab(host, dir);
        try {
            lab.prepare();
            return lab;
        } catch (RuntimeException | Error e) {
            lab.close();
            throw e;
        }
    }

    private void prepare() {
        for (Path p : List.of(VAR_LIB_CNI, VAR_LIB_CNI.resolve("results"))) {
            if (!Files.exists(p)) {
                madeInVarLibCni.addFirst(p);
            }
        }
        try {
            Files.createDirectories(cniDir);
            Files.writeString(dir.resolve("containers.conf"), """
                    [network]
                    network_backend = "cni"
                    cni_plugin_dirs = ["%s", "%s"]
                    network_config_dir = "%s"
                    [engine]
                    runtime = "runc"
                    cgroup_manager = "cgroupfs"
                    events_logger = "file"
                    """.formatted(bin, PLUGINS, cniDir));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        GatunCli.ok("cni", "install", "--bin-dir", bin.toString());
        importImage();
    }

    private void importImage() {
        podmanOk("import", "--change", "CMD [\"/bin/sh\"]", BusyboxRootfs.tar(dir).toString(), IMAGE);
    }

    /** A conflist in the lab's CNI directory; its name is the network's. */
    public void network(String name, String conflist) {
        try {
            Files.writeString(cniDir.resolve(name + ".conflist"), conflist);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        networks.add(name);
    }

    /** gatun as the main (and only) plugin of network {@code name}, host-local's data in the lab. */
    public void gatunNetwork(String name, String subnet) {
        network(name, """
                {"cniVersion": "0.4.0", "name": "%s", "plugins": [
                  {"type": "gatun", "bridge": "gt-%s", "isGateway": true, "ipMasq": true, "hairpinMode": true,
                   "ipam": {"type": "host-local", "ranges": [[{"subnet": "%s"}]], "routes": [{"dst": "0.0.0.0/0"}],
                            "dataDir": "%s"},
                   "capabilities": {"portMappings": true}}]}""".formatted(name, name, subnet, dir.resolve("ipam")));
    }

    /**
     * Podman's own conflist for a new network ({@code podman network create}: bridge, portmap,
     * firewall, tuning), with host-local's data moved into the lab and, when {@code chainGatun},
     * {@code portmap} replaced by gatun.
     */
    public void podmanNetwork(String name, String subnet, boolean chainGatun) {
        podmanOk("network", "create", "--subnet", subnet, name);
        networks.add(name);
        Path file = cniDir.resolve(name + ".conflist");
        try {
            ObjectNode list = (ObjectNode) CniExec.JSON.readTree(Files.readString(file));
            for (JsonNode plugin : (ArrayNode) list.get("plugins")) {
                ObjectNode p = (ObjectNode) plugin;
                if (p.has("ipam")) {
                    ((ObjectNode) p.get("ipam")).put("dataDir", dir.resolve("ipam").toString());
                }
                if (chainGatun && p.path("type").asText().equals("portmap")) {
                    p.put("type", "gatun");
                }
            }
            Files.writeString(file, CniExec.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(list));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JsonNode conflist(String name) {
        try {
            return CniExec.JSON.readTree(Files.readString(cniDir.resolve(name + ".conflist")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code podman run -d} with the lab's ulimits. */
    public Result runDetached(String name, String network, List<String> publish, String... command) {
        List<String> args = new ArrayList<>(List.of("run", "-d", "--name", name, "--network", network,
                "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"));
        for (String p : publish) {
            args.add("-p");
            args.add(p);
        }
        args.add(IMAGE);
        args.addAll(List.of(command));
        return podman(args.toArray(String[]::new));
    }

    public Result podman(String... args) {
        List<String> cmd = new ArrayList<>(List.of("nsenter", "--net=" + host.path(), "podman",
                "--root", dir.resolve("root").toString(), "--runroot", dir.resolve("run").toString(),
                "--tmpdir", dir.resolve("tmp").toString(), "--storage-driver", "vfs", "--runtime", "runc",
                "--cgroup-manager", "cgroupfs", "--events-backend", "file", "--network-backend", "cni",
                "--cni-config-dir", cniDir.toString()));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    public Result podmanOk(String... args) {
        return ok(podman(args), "podman " + String.join(" ", args));
    }

    private static Result ok(Result r, String what) {
        if (r.code() != 0) {
            throw new AssertionError(what + " exited " + r.code() + "\nstdout: " + r.out() + "\nstderr: " + r.err());
        }
        return r;
    }

    private Result run(List<String> cmd) {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("CONTAINERS_CONF", dir.resolve("containers.conf").toString());
        pb.environment().keySet().removeIf(k -> k.startsWith("CNI_"));
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<String> out = Streams.readAsync(p.getInputStream());
            CompletableFuture<String> err = Streams.readAsync(p.getErrorStream());
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError(cmd + " did not finish within 300 s");
            }
            return new Result(p.exitValue(), Bounded.get(out, OUTPUT_OPEN, "stdout after the exit"), Bounded.get(err, OUTPUT_OPEN, "stderr after the exit"));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The addresses host-local holds for {@code network}. */
    public List<String> reservations(String network) {
        Path d = dir.resolve("ipam").resolve(network);
        if (!Files.isDirectory(d)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(d)) {
            return files.map(f -> f.getFileName().toString()).filter(f -> f.matches("[0-9.]+")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        AssertionError failure = null;
        if (Files.isDirectory(dir.resolve("root"))) {
            Result rm = podman("rm", "-a", "-f", "-t", "0");
            if (rm.code() != 0) {
                failure = new AssertionError("podman rm -af failed: " + rm.err());
            }
        }
        // libcni's result cache: the lab's networks' files, and the directories if the lab made them.
        Path results = VAR_LIB_CNI.resolve("results");
        if (Files.isDirectory(results)) {
            try (Stream<Path> files = Files.list(results)) {
                for (Path f : files.toList()) {
                    if (networks.stream().anyMatch(n -> f.getFileName().toString().startsWith(n + "-"))) {
                        Files.deleteIfExists(f);
                    }
                }
            } catch (IOException e) {
                failure = failure != null ? failure : new AssertionError("cannot clean " + results, e);
            }
        }
        for (Path p : madeInVarLibCni) {
            try (Stream<Path> left = Files.isDirectory(p) ? Files.list(p) : Stream.empty()) {
                if (left.findAny().isEmpty()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                failure = failure != null ? failure : new AssertionError("cannot remove " + p, e);
            }
        }
        try {
            LabDirectory.remove(dir);
        } catch (AssertionError e) {
            failure = failure != null ? failure : e;
        }
        if (failure != null) {
            throw failure;
        }
    }
}
