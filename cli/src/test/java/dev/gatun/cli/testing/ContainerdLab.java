package dev.gatun.cli.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gatun.cli.cri.v1.ContainerConfig;
import dev.gatun.cli.cri.v1.ContainerMetadata;
import dev.gatun.cli.cri.v1.ImageSpec;
import dev.gatun.cli.cri.v1.KeyValue;
import dev.gatun.cli.cri.v1.PodIP;
import dev.gatun.cli.cri.v1.PodSandboxConfig;
import dev.gatun.cli.cri.v1.PodSandboxMetadata;
import dev.gatun.cli.cri.v1.PodSandboxStatus;
import dev.gatun.cli.cri.v1.PodSandboxStatusRequest;
import dev.gatun.cli.cri.v1.PortMapping;
import dev.gatun.cli.cri.v1.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Debian's containerd (1.6, its CRI plugin built in) confined to one test and driven over CRI as
 * the kubelet drives it: started inside the test's host namespace with {@code nsenter --net}, its
 * root, state, sockets, CNI {@code bin_dir} (gatun's link from {@code gatun cni install}, then
 * the reference plugins) and {@code conf_dir} (one conflist, {@link Network}) in a directory of
 * the lab's own, runc as the runtime, the native snapshotter, the {@link TestImages} imported
 * with {@code ctr}. The sandbox namespaces the CRI makes under /var/run/netns, what libcni keeps
 * in /var/lib/cni for the lab's network, the shims and every mount under the lab's directory are
 * gone after {@link #close()}.
 */
public final class ContainerdLab implements AutoCloseable {

    /** The conflist of the lab's one CNI network. */
    public enum Network {
        /** gatun as the main (and only) plugin, in place of bridge + portmap. */
        GATUN_MAIN,
        /** The reference {@code bridge}, then gatun in place of {@code portmap}. */
        GATUN_AFTER_BRIDGE,
        /** The reference chain itself: {@code bridge} + {@code portmap}. */
        PORTMAP_AFTER_BRIDGE,
        /** {@code bridge} alone, no plugin for hostPorts: the floor of a pod's network setup. */
        BRIDGE_ALONE
    }

    public static final String NETWORK = "gatun-cri";
    public static final String BRIDGE = "gcri0";
    public static final Path PLUGINS = Path.of("/usr/lib/cni");
    private static final Path NETNS_DIR = Path.of("/var/run/netns");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration READY = Duration.ofSeconds(60);

    /** A pod the lab started: its sandbox, its one server container, its addresses (IPv4 first). */
    public record Pod(String name, String id, String container, List<String> ips) {
        public String ip() {
            return ips.getFirst();
        }
    }

    public final NetworkNamespace host;
    public final Path dir;
    public final Path bin;
    public final Path socket;
    private final Path config;
    private final Path log;
    private final Set<String> netnsBefore;
    private final List<Path> madeInVarLibCni = new ArrayList<>();
    private final List<String> sandboxesRun = new CopyOnWriteArrayList<>();
    /** Labs not closed yet: a lab sweeps the sandbox namespaces it cannot attribute only when alone. */
    private static final Set<ContainerdLab> LIVE = ConcurrentHashMap.newKeySet();
    private final Set<String> own = new HashSet<>();
    private Process containerd;
    private CriClient cri;

    /** The Debian 13 bed containerd runs in, or null for the machine's own. */
    private DebianBed bed;
    /** libcni's cache directory as the runtime sees it: in the bed, the bed's. */
    private final Path varLibCni;

    private ContainerdLab(NetworkNamespace host, Path dir, boolean inBed) {
        this.host = host;
        this.dir = dir;
        this.varLibCni = inBed ? DebianBed.ROOT.resolve("var/lib/cni") : Path.of("/var/lib/cni");
        this.bin = dir.resolve("bin");
        this.socket = dir.resolve("containerd.sock");
        this.config = dir.resolve("config.toml");
        this.log = dir.resolve("containerd.log");
        this.netnsBefore = new HashSet<>(sandboxNamespaces());
    }

    /** The machine's containerd in {@code host} with {@code network} over the given IPAM subnets (IPv4 first, then IPv6). */
    public static ContainerdLab start(NetworkNamespace host, Network network, String... subnets) {
        return start(host, network, false, subnets);
    }

    /**
     * The containerd of the Debian 13 bed ({@link DebianBed}, made by ci/testbed) in {@code host}:
     * its sandbox namespaces' names stay in the bed's /run ({@link #namespaceOf} goes through the
     * pause process; killing a sandbox and listing them run in the bed).
     */
    public static ContainerdLab startInBed(NetworkNamespace host, Network network, String... subnets) {
        return start(host, network, true, subnets);
    }

    private static ContainerdLab start(NetworkNamespace host, Network network, boolean inBed, String... subnets) {
        FreshNamespaces.requirePrivileges();
        Requirements.require("the containerd tests need containerd, runc, containernetworking-plugins, busybox-static, "
                        + "gcc, tar, chroot and curl", List.of("containerd", "containerd-shim-runc-v2", "ctr", "runc",
                        "nsenter", "gcc", "tar", "chroot", "curl"),
                List.of(PLUGINS.resolve("host-local"), Path.of("/bin/busybox")));
        Path dir;
        try {
            dir = Files.createTempDirectory(Path.of("/tmp"), "gcd");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ContainerdLab lab = new ContainerdLab(host, dir, inBed);
        LIVE.add(lab);
        try {
            lab.prepare(network, List.of(subnets));
            if (inBed) {
                lab.bed = DebianBed.enter(host, List.of(dir));
            }
            lab.launch();
            Path images = TestImages.archive(dir.resolve("images"));
            List<String> ctr = lab.inRuntime(List.of("ctr", "--address", lab.socket.toString(), "-n", "k8s.io",
                    "images", "import", "--snapshotter", "native", images.toString()));
            Oracle.host(ctr.toArray(String[]::new));
            return lab;
        } catch (RuntimeException | Error e) {
            lab.close();
            throw e;
        }
    }

    private void prepare(Network network, List<String> subnets) {
        for (Path p : List.of(varLibCni, varLibCni.resolve("results"))) {
            if (!Files.exists(p)) {
                madeInVarLibCni.addFirst(p);
            }
        }
        try {
            Files.createDirectories(bin);
            Files.createDirectories(dir.resolve("net.d"));
            Files.createDirectories(dir.resolve("images"));
            GatunCli.ok("cni", "install", "--bin-dir", bin.toString());
            for (String plugin : List.of("host-local", "loopback", "bridge", "portmap")) {
                // Copies, not links: the bed has no /usr/lib/cni of its own.
                Files.copy(PLUGINS.resolve(plugin), bin.resolve(plugin), StandardCopyOption.COPY_ATTRIBUTES);
            }
            Files.writeString(dir.resolve("net.d/10-" + NETWORK + ".conflist"), conflist(network, subnets));
            Files.writeString(config, containerdConfig());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String conflist(Network network, List<String> subnets) {
        ObjectNode ipam = JSON.createObjectNode().put("type", "host-local").put("dataDir", dir.resolve("ipam").toString());
        ArrayNode ranges = ipam.putArray("ranges");
        ArrayNode routes = ipam.putArray("routes");
        for (String subnet : subnets) {
            ranges.addArray().addObject().put("subnet", subnet);
            routes.addObject().put("dst", subnet.contains(":") ? "::/0" : "0.0.0.0/0");
        }
        ObjectNode list = JSON.createObjectNode().put("cniVersion", "1.0.0").put("name", NETWORK);
        ArrayNode plugins = list.putArray("plugins");
        ObjectNode first = plugins.addObject();
        first.put("type", network == Network.GATUN_MAIN ? "gatun" : "bridge").put("bridge", BRIDGE)
                .put("isGateway", true).put("ipMasq", true).put("hairpinMode", true).set("ipam", ipam);
        if (network != Network.BRIDGE_ALONE) {
            ObjectNode ports = network == Network.GATUN_MAIN ? first : plugins.addObject()
                    .put("type", network == Network.GATUN_AFTER_BRIDGE ? "gatun" : "portmap");
            // Without the capability the CRI sends no port mappings at all.
            ports.putObject("capabilities").put("portMappings", true);
        }
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(list);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String containerdConfig() {
        return """
                version = 2
                root = "%1$s/root"
                state = "%1$s/state"
                disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
                  "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp"]
                [grpc]
                  address = "%2$s"
                [ttrpc]
                  address = "%2$s.ttrpc"
                [debug]
                  address = ""
                [metrics]
                  address = ""
                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%3$s"
                  # root here lacks CAP_SYS_RESOURCE: runc could not raise oom_score_adj
                  restrict_oom_score_adj = true
                  disable_tcp_service = true
                  stream_server_address = "127.0.0.1"
                  stream_server_port = "0"
                  [plugins."io.containerd.grpc.v1.cri".containerd]
                    snapshotter = "native"
                    default_runtime_name = "runc"
                    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
                      runtime_type = "io.containerd.runc.v2"
                      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                        SystemdCgroup = false
                  [plugins."io.containerd.grpc.v1.cri".cni]
                    bin_dir = "%4$s"
                    conf_dir = "%1$s/net.d"
                    max_conf_num = 1
                """.formatted(dir, socket, TestImages.PAUSE, bin);
    }

    private void launch() {
        ProcessBuilder pb = new ProcessBuilder(inRuntime(List.of("containerd", "--config", config.toString())));
        pb.environment().keySet().removeIf(k -> k.startsWith("CNI_") || k.equals("NOTIFY_SOCKET"));
        pb.redirectErrorStream(true);
        pb.redirectOutput(Redirect.appendTo(log.toFile()));
        try {
            containerd = pb.start();
        } catch (IOException e) {
            throw new AssertionError("cannot start containerd", e);
        }
        cri = CriClient.connect(socket);
        try {
            cri.awaitReady(READY);
        } catch (RuntimeException | Error e) {
            throw new AssertionError("containerd did not answer CRI within " + READY + " (alive: " + containerd.isAlive()
                    + "); its log:\n" + log(), e);
        }
    }

    /** {@code args} as a command line run where containerd runs: in the node namespace, in the bed if there is one. */
    private List<String> inRuntime(List<String> args) {
        if (bed != null) {
            return bed.command(Map.of(), args);
        }
        List<String> cmd = new ArrayList<>(List.of("nsenter", "--net=" + host.path()));
        cmd.addAll(args);
        return cmd;
    }

    /** containerd's own version, as its CRI says (1.6.20 here, 1.7.24 in the bed). */
    public String runtimeVersion() {
        return cri.version().getRuntimeVersion();
    }

    public CriClient cri() {
        return cri;
    }

    public String log() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** containerd killed with SIGKILL, as a crash, then started again on the same root and state. */
    public void restartContainerd() throws InterruptedException {
        cri.close();
        containerd.destroyForcibly();
        if (!containerd.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("containerd did not die within 30 s of SIGKILL");
        }
        launch();
    }

    public static PortMapping tcp(int hostPort, int containerPort) {
        return port(Protocol.TCP, hostPort, containerPort, "");
    }

    public static PortMapping udp(int hostPort, int containerPort) {
        return port(Protocol.UDP, hostPort, containerPort, "");
    }

    public static PortMapping port(Protocol protocol, int hostPort, int containerPort, String hostIp) {
        return PortMapping.newBuilder().setProtocol(protocol).setHostPort(hostPort).setContainerPort(containerPort)
                .setHostIp(hostIp).build();
    }

    /** The sandbox's config as the kubelet writes it for a pod named {@code name} with these hostPorts. */
    public PodSandboxConfig sandboxConfig(String name, List<PortMapping> ports) {
        String uid = UUID.randomUUID().toString();
        return PodSandboxConfig.newBuilder()
                .setMetadata(PodSandboxMetadata.newBuilder().setName(name).setUid(uid).setNamespace("default"))
                .setHostname(name)
                .setLogDirectory(dir.resolve("logs").resolve(name + "_" + uid).toString())
                .addAllPortMappings(ports)
                .putLabels("io.kubernetes.pod.name", name)
                .putLabels("io.kubernetes.pod.namespace", "default")
                .putLabels("io.kubernetes.pod.uid", uid)
                .build();
    }

    /** RunPodSandbox alone: the sandbox's id. */
    public String runSandbox(PodSandboxConfig sandbox) {
        String id = cri.runPodSandbox(sandbox);
        sandboxesRun.add(id);
        return id;
    }

    /** Every sandbox a RunPodSandbox of this lab made, in order. */
    public List<String> sandboxesRun() {
        return List.copyOf(sandboxesRun);
    }

    /**
     * The kubelet's sequence for a pod with one container: RunPodSandbox, PodSandboxStatus,
     * CreateContainer, StartContainer. The container answers HTTP with {@code hello-from-NAME} on
     * each TCP container port and UDP with {@code udp-from-NAME} on each UDP one.
     */
    public Pod runPod(String name, List<PortMapping> ports) {
        PodSandboxConfig sandbox = sandboxConfig(name, ports);
        String id = runSandbox(sandbox);
        PodSandboxStatus status = cri.podSandboxStatus(id);
        List<String> ips = new ArrayList<>();
        if (!status.getNetwork().getIp().isEmpty()) {
            ips.add(status.getNetwork().getIp());
        }
        for (PodIP extra : status.getNetwork().getAdditionalIpsList()) {
            ips.add(extra.getIp());
        }
        StringBuilder serve = new StringBuilder("echo hello-from-$POD > /tmp/index.html; ");
        ports.stream().map(PortMapping::getContainerPort).distinct().forEach(p -> {
            if (ports.stream().anyMatch(m -> m.getContainerPort() == p && m.getProtocol() == Protocol.TCP)) {
                serve.append("httpd -p ").append(p).append(" -h /tmp; ");
            }
            if (ports.stream().anyMatch(m -> m.getContainerPort() == p && m.getProtocol() == Protocol.UDP)) {
                serve.append("udpreply ").append(p).append(" udp-from-$POD & ");
            }
        });
        serve.append("exec /pause");
        ContainerConfig web = ContainerConfig.newBuilder()
                .setMetadata(ContainerMetadata.newBuilder().setName("web"))
                .setImage(ImageSpec.newBuilder().setImage(TestImages.BUSYBOX))
                .addAllCommand(List.of("/bin/sh", "-c", serve.toString()))
                .addEnvs(KeyValue.newBuilder().setKey("POD").setValue(name))
                .setLogPath("web.log")
                .build();
        String container = cri.createContainer(id, web, sandbox);
        cri.startContainer(container);
        return new Pod(name, id, container, List.copyOf(ips));
    }

    /** The kubelet's sequence when a pod goes: StopContainer, StopPodSandbox, RemoveContainer, RemovePodSandbox. */
    public void removePod(Pod pod) {
        cri.stopContainer(pod.container(), 0);
        cri.stopPodSandbox(pod.id());
        cri.removeContainer(pod.container());
        cri.removePodSandbox(pod.id());
    }

    /** The sandbox namespace the CRI made for {@code pod}, checked to hold its address. */
    public NetworkNamespace namespaceOf(Pod pod) throws IOException {
        // Through its pause process: in the bed the namespace's name is under the bed's /run, out of reach.
        NetworkNamespace ns = NetworkNamespace.at(Path.of("/proc/" + sandboxPid(pod) + "/ns/net"));
        if (!Oracle.tryIn(ns, "ip", "-o", "addr", "show").stdout().contains(" " + pod.ip() + "/")) {
            throw new AssertionError("the sandbox namespace of pod " + pod.name() + " does not hold " + pod.ip());
        }
        return ns;
    }

    /**
     * The pod's sandbox process killed and its namespace's name removed, as when a node loses
     * them under the runtime: containerd then tears the network down with no namespace path.
     */
    public void killSandbox(Pod pod) throws Exception {
        List<String> names = namespacesOf(pod.id());
        assertThat(names).as("the sandbox's namespace names").isNotEmpty();
        long pid = sandboxPid(pod);
        ProcessHandle sandbox = ProcessHandle.of(pid).orElseThrow(() -> new AssertionError("no sandbox process " + pid));
        sandbox.destroyForcibly();
        sandbox.onExit().get(30, TimeUnit.SECONDS);
        for (String name : names) {
            String path = NETNS_DIR.resolve(name).toString();
            Oracle.Result gone = Oracle.run(inRuntime(List.of("sh", "-c", "umount " + path + " && rm " + path)));
            assertThat(gone.exitCode()).as("the name of namespace %s removed: %s", name, gone.stderr()).isZero();
        }
    }

    /** The addresses host-local holds for the lab's network. */
    public List<String> reservations() {
        Path d = dir.resolve("ipam").resolve(NETWORK);
        if (!Files.isDirectory(d)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(d)) {
            return files.map(f -> f.getFileName().toString()).filter(f -> f.matches("[0-9a-f.:]+"))
                    .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sandbox namespaces the CRI made since the lab started and has not removed. */
    public List<String> sandboxNamespacesLeft() {
        return sandboxNamespaces().stream().filter(n -> !netnsBefore.contains(n)).toList();
    }

    private List<String> sandboxNamespaces() {
        if (bed == null) {
            return hostSandboxNamespaces();
        }
        // The bed's /run is its own: asked there.
        Oracle.Result ls = Oracle.run(inRuntime(List.of("sh", "-c", "ls " + NETNS_DIR + " 2>/dev/null || true")));
        return ls.stdout().lines().filter(n -> n.startsWith("cni-")).sorted().toList();
    }

    private static List<String> hostSandboxNamespaces() {
        if (!Files.isDirectory(NETNS_DIR)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(NETNS_DIR)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("cni-")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The process id of the pod's sandbox (its pause process), as containerd's verbose status gives it. */
    public long sandboxPid(Pod pod) throws IOException {
        String info = cri.podSandboxStatus(PodSandboxStatusRequest.newBuilder().setPodSandboxId(pod.id())
                .setVerbose(true).build()).getInfoOrThrow("info");
        return JSON.readTree(info).path("pid").asLong();
    }

    /** The names under /var/run/netns of a sandbox's namespaces, from its runtime spec. */
    private List<String> namespacesOf(String sandbox) {
        try {
            String info = cri.podSandboxStatus(PodSandboxStatusRequest.newBuilder().setPodSandboxId(sandbox)
                    .setVerbose(true).build()).getInfoOrDefault("info", "{}");
            List<String> names = new ArrayList<>();
            for (var ns : JSON.readTree(info).path("runtimeSpec").path("linux").path("namespaces")) {
                Path path = Path.of(ns.path("path").asText("/"));
                if (NETNS_DIR.equals(path.getParent())) {
                    names.add(path.getFileName().toString());
                }
            }
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The shims this lab's containerd started (they outlive it by design), with their children. */
    private List<ProcessHandle> shims() {
        String address = socket.toString();
        return ProcessHandle.allProcesses()
                .filter(p -> p.info().command().orElse("").endsWith("containerd-shim-runc-v2"))
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(address)).orElse(false))
                .toList();
    }

    @Override
    public void close() {
        List<Throwable> failures = new ArrayList<>();
        if (containerd != null && containerd.isAlive() && cri != null) {
            try {
                for (var sandbox : cri.listPodSandbox()) {
                    own.addAll(namespacesOf(sandbox.getId()));
                    cri.stopPodSandbox(sandbox.getId());
                    cri.removePodSandbox(sandbox.getId());
                }
            } catch (RuntimeException e) {
                failures.add(new AssertionError("cannot remove the lab's pods; containerd's log:\n" + log(), e));
            }
        }
        if (cri != null) {
            cri.close();
        }
        if (containerd != null) {
            containerd.destroy();
            try {
                if (!containerd.waitFor(20, TimeUnit.SECONDS)) {
                    containerd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (ProcessHandle shim : shims()) {
            shim.descendants().forEach(ProcessHandle::destroyForcibly);
            shim.destroyForcibly();
        }
        if (bed != null) {
            // Its processes (the shims among them), and with the last its mounts and /run.
            bed.close();
        }
        LIVE.remove(this);
        // Another lab's pods may run beside this one (the measurement): then only this one's go.
        for (String ns : LIVE.isEmpty() ? sandboxNamespacesLeft() : own) {
            if (!Files.exists(NETNS_DIR.resolve(ns))) {
                continue;
            }
            Oracle.run(List.of("umount", NETNS_DIR.resolve(ns).toString()));
            try {
                Files.deleteIfExists(NETNS_DIR.resolve(ns));
            } catch (IOException e) {
                failures.add(e);
            }
        }
        cleanVarLibCni(failures);
        try {
            LabDirectory.remove(dir);
        } catch (AssertionError e) {
            failures.add(e);
        }
        if (!failures.isEmpty()) {
            AssertionError failure = new AssertionError("the containerd lab did not close cleanly", failures.getFirst());
            failures.stream().skip(1).forEach(failure::addSuppressed);
            throw failure;
        }
    }

    /** libcni's result cache: the lab network's files, and the directories if the lab made them. */
    private void cleanVarLibCni(List<Throwable> failures) {
        Path results = varLibCni.resolve("results");
        if (Files.isDirectory(results)) {
            try (Stream<Path> files = Files.list(results)) {
                for (Path f : files.toList()) {
                    if (f.getFileName().toString().startsWith(NETWORK + "-")) {
                        Files.deleteIfExists(f);
                    }
                }
            } catch (IOException e) {
                failures.add(e);
            }
        }
        for (Path p : madeInVarLibCni) {
            try (Stream<Path> left = Files.isDirectory(p) ? Files.list(p) : Stream.empty()) {
                if (left.findAny().isEmpty()) {
                    Files.deleteIfExists(p);
                }
            } catch (IOException e) {
                failures.add(e);
            }
        }
    }
}
