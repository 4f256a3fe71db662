package dev.gatun.cli.testing;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Daemons;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Assumptions;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A real dockerd (Debian's docker.io, Docker 20.10) with its own containerd, inside a fresh
 * named network namespace, with all of its state under one temporary directory, so that any
 * number of labs can run side by side and the host's namespace, ruleset and links stay
 * untouched. It knows one image, {@link #IMAGE}: busybox, imported without a registry, plus
 * {@code /bin/udpreply PORT TEXT}, a static UDP responder (this busybox has no UDP server).
 *
 * <pre>{@code
 * try (DockerLab lab = DockerLab.start()) {
 *     lab.dockerOk("run", "--rm", "--network", "none", DockerLab.IMAGE, "true");
 * }
 * }</pre>
 *
 * Needs root, dockerd, containerd, tini (all from docker.io), /bin/busybox (busybox-static) and
 * gcc with a static libc (for udpreply); without them {@link #start()} skips the test, except with
 * CI=true, where it fails.
 *
 * <p>{@link Networking#NONE} (the default) gives Docker no networking of its own, for network
 * plugins; {@link Networking#DOCKER_BRIDGE} is Docker as a real host runs it (docker0 on
 * {@link #DOCKER0_ADDRESS}, iptables rules, FORWARD policy DROP, docker-proxy), still entirely
 * inside the lab's namespace. {@link #restartDockerd()} stops dockerd and starts it again with the
 * same flags, as a package upgrade or {@code systemctl restart docker} does, and tells when it
 * was ready again.
 *
 * <p>What stays on the host after {@link #close()}: only the empty directories that every
 * dockerd 20.10 and containerd 1.6 create regardless of their roots, /run/docker/plugins and
 * /run/containerd/s (shim sockets; gone again once the shims exit).
 */
public final class DockerLab implements AutoCloseable {

    /** The image every lab has: static busybox, every applet linked in /bin, CMD /bin/sh. */
    public static final String IMAGE = "gatun-test/busybox:latest";

    /** What {@link #docker} returns. */
    public record Result(int code, String out, String err) {}

    /**
     * The address of docker0 in the {@link Networking#DOCKER_BRIDGE} labs, given to dockerd with
     * {@code --bip}: clear of every subnet the tests use (10.89/16, 10.90/16, 192.0.2/24) and of
     * Docker's own default 172.17.0.0/16, so the lab's bridge never looks like anything else.
     */
    public static final String DOCKER0_ADDRESS = "172.31.250.1/24";

    /** The subnet of {@link #DOCKER0_ADDRESS}, as Docker writes it in its MASQUERADE rule. */
    public static final String DOCKER0_SUBNET = "172.31.250.0/24";

    /** What Docker itself does for networking in the lab. */
    public enum Networking {
        /** No docker0, no iptables, no docker-proxy: networks come from plugins (and none, host). */
        NONE(List.of("--iptables=false", "--ip6tables=false", "--bridge=none", "--userland-proxy=false"), List.of()),
        /**
         * As a real host runs Docker (its defaults, spelled out): the docker0 bridge on
         * {@link #DOCKER0_ADDRESS}, ip_forward on, iptables rules through the iptables binary (which
         * runs in dockerd's namespace, so the rules land in the lab's: tables {@code ip filter} and
         * {@code ip nat} with iptables-nft), the FORWARD policy DROP, the chains DOCKER, DOCKER-USER,
         * DOCKER-ISOLATION-STAGE-1/2, and a docker-proxy per published port. No ip6tables (20.10's
         * default).
         */
        DOCKER_BRIDGE(List.of("--iptables=true", "--ip-forward=true", "--ip6tables=false", "--bip=" + DOCKER0_ADDRESS),
                List.of("iptables", "docker-proxy")),
        /** As {@link #DOCKER_BRIDGE} without docker-proxy: iptables rules only (hairpin NAT instead). */
        DOCKER_BRIDGE_NO_PROXY(List.of("--iptables=true", "--ip-forward=true", "--ip6tables=false",
                "--bip=" + DOCKER0_ADDRESS, "--userland-proxy=false"), List.of("iptables")),
        /**
         * dockerd leaving the firewall to gatun ({@code serve --docker}): docker0 on
         * {@link #DOCKER0_ADDRESS} and ip_forward, but no iptables rules; without docker-proxy, so
         * that a published port that answers answers through gatun alone.
         */
        GATUN_FOLLOWS(List.of("--iptables=false", "--ip6tables=false", "--ip-forward=true", "--bip=" + DOCKER0_ADDRESS,
                "--userland-proxy=false"), List.of()),
        /** As {@link #GATUN_FOLLOWS} with docker-proxy (dockerd's default): each published port held by a proxy. */
        GATUN_FOLLOWS_WITH_PROXY(List.of("--iptables=false", "--ip6tables=false", "--ip-forward=true",
                "--bip=" + DOCKER0_ADDRESS, "--userland-proxy=true"), List.of("docker-proxy"));

        private final List<String> flags;
        private final List<String> tools;

        Networking(List<String> flags, List<String> tools) {
            this.flags = flags;
            this.tools = tools;
        }

        /** The networking flags dockerd gets, after the lab's own (roots, sockets, cgroups). */
        public List<String> flags() {
            return flags;
        }
    }

    /**
     * One {@link #restartDockerd()}: when the SIGTERM went out, when dockerd had exited, when the
     * new one first answered {@code GET /_ping}; {@link System#nanoTime()} values.
     */
    public record Restart(long stopRequestedNanos, long stoppedNanos, long readyNanos) {
        public Duration stopTook() {
            return Duration.ofNanos(stoppedNanos - stopRequestedNanos);
        }

        public Duration startTook() {
            return Duration.ofNanos(readyNanos - stoppedNanos);
        }

        /** How long after dockerd was ready {@code nanoTime} is (negative: before). */
        public Duration sinceReady(long nanoTime) {
            return Duration.ofNanos(nanoTime - readyNanos);
        }
    }

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final String BUSYBOX = "/bin/busybox";

    private final String name;
    private final Path dir;
    private final Path nsPath;
    private final Networking networking;
    /** Debian 13's dockerd 26 and containerd 1.7 from the test bed, when the lab runs them there. */
    private final boolean inBed;
    private DebianBed bed;
    private Process containerd;
    private Process dockerd;
    private List<String> dockerdCommand;
    private long dockerdReadyNanos;

    private DockerLab(String name, Path dir, Networking networking, boolean inBed) {
        this.name = name;
        this.dir = dir;
        this.nsPath = Path.of("/run/netns", name);
        this.networking = networking;
        this.inBed = inBed;
    }

    // ---- availability -------------------------------------------------------------------

    /** True when this process may create namespaces and every tool the lab runs is installed. */
    public static boolean available() {
        return missing(Networking.NONE).isEmpty() && privileged();
    }

    /** Skips the calling test, or with CI=true fails it, unless {@link #available()}. */
    public static void requireAvailable() {
        requireAvailable(Networking.NONE);
    }

    private static void requireAvailable(Networking networking) {
        FreshNamespaces.requirePrivileges();
        List<String> missing = missing(networking);
        if (missing.isEmpty()) {
            return;
        }
        String why = "the Docker lab needs " + String.join(", ", missing)
                + " (install them with ci/setup, or apt-get install docker.io busybox-static)";
        if ("true".equals(System.getenv("CI"))) {
            throw new AssertionError(why + "; with CI=true it fails instead of skipping");
        }
        Assumptions.abort(why);
    }

    private static boolean privileged() {
        try {
            FreshNamespaces.requirePrivileges();
            return true;
        } catch (AssertionError | RuntimeException e) {
            return false; // the skip (TestAbortedException) or the CI failure
        }
    }

    private static List<String> missing(Networking networking) {
        List<String> missing = new ArrayList<>();
        List<String> tools = new ArrayList<>(List.of("dockerd", "containerd", "tini", "docker", "nsenter", "ip", "tar",
                "chroot", "umount", "gcc"));
        tools.addAll(networking.tools);
        for (String tool : tools) {
            if (Daemons.tool(tool).isEmpty()) {
                missing.add(tool);
            }
        }
        if (!Files.isExecutable(Path.of(BUSYBOX))) {
            missing.add(BUSYBOX);
        }
        return missing;
    }

    // ---- start --------------------------------------------------------------------------

    /** Starts a lab: namespace, containerd, dockerd, and the {@link #IMAGE}; Docker without networking of its own. */
    public static DockerLab start() {
        return start(Networking.NONE);
    }

    /** Starts a lab whose dockerd (Debian 12's, 20.10) does {@code networking}. */
    public static DockerLab start(Networking networking) {
        return start(networking, false);
    }

    /**
     * Starts a lab whose dockerd does {@code networking}: Debian 12's (20.10), or with {@code
     * inBed} Debian 13's dockerd 26 and containerd 1.7 from the test bed ({@link DebianBed}),
     * entered in the lab's namespace with the lab's directory at the same path; the docker CLI,
     * the API socket and the data root are the same to the test either way.
     */
    public static DockerLab start(Networking networking, boolean inBed) {
        requireAvailable(networking);
        String name = "gatun-dk-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        Path dir;
        try {
            // Short and under /tmp, not java.io.tmpdir: unix socket paths stop at 108 bytes.
            dir = Files.createTempDirectory(Path.of("/tmp"), "gdk-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        DockerLab lab = new DockerLab(name, dir, networking, inBed);
        try {
            lab.startAll();
            return lab;
        } catch (RuntimeException | Error e) {
            try {
                lab.close();
            } catch (RuntimeException | Error cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void startAll() {
        check(run(List.of(Daemons.toolPath("ip"), "netns", "add", name), null), "ip netns add " + name);
        check(run(List.of(Daemons.toolPath("ip"), "-n", name, "link", "set", "lo", "up"), null), "ip link set lo up");
        try {
            Files.createDirectories(dir.resolve("data"));
            Files.createDirectories(dir.resolve("exec"));
            Files.createDirectories(dir.resolve("client"));
            // Our own containerd, not the one dockerd would start: dockerd 20.10 silently uses a
            // host containerd when /run/containerd/containerd.sock exists, and its generated
            // config lets containerd create /opt/containerd.
            Files.writeString(dir.resolve("containerd.toml"), """
                    version = 2
                    root = "%1$s/ctd/root"
                    state = "%1$s/ctd/state"
                    disabled_plugins = ["io.containerd.grpc.v1.cri"]
                    [grpc]
                      address = "%2$s"
                    [plugins."io.containerd.internal.v1.opt"]
                      path = "%1$s/ctd/opt"
                    """.formatted(dir, containerdSocket()));
            // Not /etc/docker/daemon.json, and the trust key not in /etc/docker/key.json (dockerd 26
            // keeps no trust key, and refuses the option).
            Files.writeString(dir.resolve("daemon.json"), inBed ? "{}\n"
                    : "{\"deprecated-key-path\": \"%s\"}\n".formatted(dir.resolve("key.json")));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }

        if (inBed) {
            // The plugins' sockets too, where dockerd looks for them: a serve of the tests' makes them on the host.
            try {
                Files.createDirectories(GatunServe.PLUGIN_DIR);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            bed = DebianBed.enter(NetworkNamespace.named(name), List.of(dir, GatunServe.PLUGIN_DIR));
        }
        // nsenter --net, not ip netns exec: that remounts /sys and hides the cgroup mounts. tini -s
        // is a subreaper, so the shims (which containerd double-forks) stay in the lab's tree and
        // are reaped even where pid 1 does not reap.
        containerd = daemon(dir.resolve("containerd.log"), false, Daemons.toolPath("tini"), "-s", "--",
                Daemons.toolPath("containerd"), "--config", dir.resolve("containerd.toml").toString());
        waitFor("containerd", () -> Files.exists(containerdSocket()), containerd, dir.resolve("containerd.log"));

        List<String> command = new ArrayList<>(List.of(Daemons.toolPath("dockerd"),
                "--config-file", dir.resolve("daemon.json").toString(),
                "--containerd", containerdSocket().toString(),
                "--data-root", dataRoot().toString(),
                "--exec-root", execRoot().toString(),
                "--pidfile", dir.resolve("dockerd.pid").toString(),
                "-H", "unix://" + socket(),
                // Container cgroups under a parent of our own, removed on close.
                "--exec-opt", "native.cgroupdriver=cgroupfs", "--cgroup-parent", "/" + name));
        // NONE: nothing at all, no iptables rules, no docker0, no docker-proxy. DOCKER_BRIDGE: all
        // of them, inside the namespace (iptables and docker-proxy run in dockerd's namespace, and
        // the sysctls dockerd writes, ip_forward and conf/docker0/accept_ra, are per namespace;
        // bridge-nf-call-iptables, which it reads and would set to 1, is per namespace as well
        // since Linux 5.3 and already 1 in a new one, so it writes nothing there).
        command.addAll(networking.flags);
        dockerdCommand = List.copyOf(command);
        startDockerd();

        importImage();
    }

    private Process daemon(Path log, boolean append, String... command) {
        List<String> cmd;
        if (bed != null) {
            cmd = bed.command(Map.of(), List.of(command));
        } else {
            cmd = new ArrayList<>(List.of(Daemons.toolPath("nsenter"), "--net=" + nsPath));
            cmd.addAll(List.of(command));
        }
        return Daemons.start(cmd, log, append, DockerLab::scrub);
    }

    private void waitFor(String what, Daemons.Check ready, Process process, Path log) {
        Daemons.awaitReady(what, ready, process, START_TIMEOUT, () -> Daemons.tail(log));
    }

    // ---- dockerd: start, stop, restart ----------------------------------------------------

    /**
     * Starts dockerd with the lab's flags (the same every time) and waits until it answers
     * {@code GET /_ping}; its log goes on in dockerd.log. Returns {@link System#nanoTime()} at the
     * first answer: dockerd 20.10 serves its API only once it has restored its containers (and
     * restarted those with a restart policy) and set up its networks, so that is the moment it is
     * ready. Containerd is not touched.
     */
    public long startDockerd() {
        if (dockerd != null && dockerd.isAlive()) {
            throw new IllegalStateException("dockerd is running (pid " + dockerd.pid() + ")");
        }
        dockerd = daemon(dir.resolve("dockerd.log"), true, dockerdCommand.toArray(String[]::new));
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            // A ping blocks in the listen backlog until dockerd serves its API; its end is the moment.
            if (ping(deadline)) {
                dockerdReadyNanos = System.nanoTime();
                return dockerdReadyNanos;
            }
            if (!dockerd.isAlive()) {
                throw new AssertionError("dockerd exited with " + dockerd.exitValue() + "; the end of its log:\n" + dockerdLog());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("dockerd did not answer within " + START_TIMEOUT.toSeconds()
                        + " s; the end of its log:\n" + dockerdLog());
            }
            sleep(10);
        }
    }

    /**
     * Stops dockerd as a service manager does: SIGTERM, then waits for it to exit (dockerd stops
     * its containers first, 10 s each at most for those that ignore SIGTERM; those with a restart
     * policy come back at the next start). Fails, after SIGKILL, if it takes longer than 30 s.
     * Returns {@link System#nanoTime()} when it had exited.
     */
    public long stopDockerd() {
        Daemons.stop(dockerd, "dockerd", STOP_TIMEOUT);
        return System.nanoTime();
    }

    /** {@link #stopDockerd()} then {@link #startDockerd()}: the same flags, roots and containerd. */
    public Restart restartDockerd() {
        long requested = System.nanoTime();
        long stopped = stopDockerd();
        long ready = startDockerd();
        return new Restart(requested, stopped, ready);
    }

    /** {@link System#nanoTime()} when dockerd last became ready ({@link #startDockerd()}). */
    public long dockerdReadyNanos() {
        return dockerdReadyNanos;
    }

    /** The running dockerd's pid. */
    public long dockerdPid() {
        return dockerd.pid();
    }

    /** dockerd's full command line: the lab's roots and sockets, then {@link Networking#flags()}. */
    public List<String> dockerdCommand() {
        return dockerdCommand;
    }

    /**
     * {@code GET /_ping} on the API socket: true on "200 OK", false when the socket is not there
     * or refuses, or nothing complete came back before {@code deadline}.
     */
    private boolean ping(long deadline) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        SocketChannel[] channel = new SocketChannel[1];
        Thread.ofVirtual().start(() -> {
            try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel[0] = c;
                c.connect(UnixDomainSocketAddress.of(socket()));
                ByteBuffer out = ByteBuffer.wrap("GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                while (out.hasRemaining()) {
                    c.write(out);
                }
                ByteArrayOutputStream in = new ByteArrayOutputStream();
                ByteBuffer buf = ByteBuffer.allocate(4096);
                while (c.read(buf.clear()) >= 0) {
                    in.write(buf.array(), 0, buf.position());
                }
                answer.complete(in.toString(StandardCharsets.UTF_8));
            } catch (IOException | RuntimeException e) {
                answer.completeExceptionally(e);
            }
        });
        try {
            String a = answer.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            return a.startsWith("HTTP/1.") && a.split(" ", 3)[1].equals("200") && a.endsWith("OK");
        } catch (ExecutionException e) {
            return false; // no socket yet, or refused: not listening yet
        } catch (TimeoutException e) {
            try {
                if (channel[0] != null) {
                    channel[0].close();
                }
            } catch (IOException ignored) {
                // only to unblock the reader
            }
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for dockerd", e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The labs' image (see {@link BusyboxRootfs}), imported from a tar: no registry, no network. */
    private void importImage() {
        dockerOk("import", "--change", "CMD [\"/bin/sh\"]", BusyboxRootfs.tar(dir).toString(), IMAGE);
    }

    // ---- use ----------------------------------------------------------------------------

    /** Runs the docker client (docker.io's) against this lab's daemon. */
    public Result docker(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Daemons.toolPath("docker"), "-H", "unix://" + socket()));
        cmd.addAll(List.of(args));
        return run(cmd, Map.of("DOCKER_CONFIG", dir.resolve("client").toString()));
    }

    /** {@link #docker}, failing with the command, exit code and stderr unless it exits 0. */
    public Result dockerOk(String... args) {
        return check(docker(args), "docker " + String.join(" ", args));
    }

    /** The endpoint id of a container's (only) network: gatun records it as the owner of its mappings. */
    public String endpointId(String container) {
        return dockerOk("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.EndpointID}}{{end}}", container).out().strip();
    }

    /** The IPv4 address of a container on its (only) network. */
    public String containerIp(String container) {
        return dockerOk("inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", container).out().strip();
    }

    /** What Docker itself does for networking in this lab. */
    public Networking networking() {
        return networking;
    }

    /** The lab's network namespace: dockerd, containerd and --network host containers live in it. */
    public String namespace() {
        return name;
    }

    public Path namespacePath() {
        return nsPath;
    }

    /** The Docker API socket (for -H unix://...). */
    public Path socket() {
        return dir.resolve("docker.sock");
    }

    public Path dataRoot() {
        return dir.resolve("data");
    }

    public Path execRoot() {
        return dir.resolve("exec");
    }

    /** The temporary directory that holds everything of this lab; deleted on close. */
    public Path dir() {
        return dir;
    }

    public Path containerdSocket() {
        return dir.resolve("containerd.sock");
    }

    /** The last lines of dockerd's log, for failure messages. */
    public String dockerdLog() {
        return Daemons.tail(dir.resolve("dockerd.log"));
    }

    // ---- close --------------------------------------------------------------------------

    /**
     * Removes every container, stops dockerd and containerd (SIGTERM, then SIGKILL), kills what
     * is left of the lab's processes, unmounts what is left under its directory, removes its
     * cgroups, directory and namespace. Runs every step even when one fails, then throws.
     */
    @Override
    public void close() {
        List<Throwable> failures = new ArrayList<>();
        step(failures, () -> {
            if (dockerd != null && dockerd.isAlive()) {
                List<String> ids = docker("ps", "-aq").out().lines().filter(s -> !s.isBlank()).toList();
                if (!ids.isEmpty()) {
                    List<String> rm = new ArrayList<>(List.of("rm", "-f"));
                    rm.addAll(ids);
                    dockerOk(rm.toArray(String[]::new));
                }
            }
        });
        step(failures, () -> Daemons.stop(dockerd, "dockerd", STOP_TIMEOUT));
        step(failures, () -> Daemons.stop(containerd, "containerd", STOP_TIMEOUT)); // tini passes SIGTERM on
        step(failures, () -> {
            if (bed != null) {
                bed.close();
            }
        });
        step(failures, this::killLeftovers);
        step(failures, this::unmountAll);
        step(failures, this::removeCgroups);
        step(failures, () -> {
            if (Files.exists(nsPath)) {
                check(run(List.of(Daemons.toolPath("ip"), "netns", "del", name), null), "ip netns del " + name);
            }
        });
        step(failures, this::deleteDir);
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError("the Docker lab " + name + " in " + dir + " was not removed cleanly: "
                    + failures.getFirst().getMessage(), failures.getFirst());
            failures.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static void step(List<Throwable> failures, Step step) {
        try {
            step.run();
        } catch (Exception | AssertionError e) {
            failures.add(e);
        }
    }

    /**
     * Every process whose command line names our directory (daemons, tini, shims) or that still
     * lives in the lab's network namespace (docker-proxy, whose command line does not).
     */
    private List<ProcessHandle> leftovers() {
        String net = netnsLink();
        long self = ProcessHandle.current().pid();
        Stream<ProcessHandle> inNamespace = net == null ? Stream.empty() : ProcessHandle.allProcesses()
                .filter(ph -> ph.pid() != self && net.equals(netnsLinkOf(ph.pid())));
        return Stream.concat(Daemons.naming(dir).stream(), inNamespace).distinct().toList();
    }

    /** "net:[INODE]", as /proc/PID/ns/net reads for a process in the lab's namespace; null once it is gone. */
    private String netnsLink() {
        try {
            return "net:[" + ((Number) Files.getAttribute(nsPath, "unix:ino")).longValue() + "]";
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    private static String netnsLinkOf(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "net")).toString();
        } catch (IOException e) {
            return null; // gone, or a kernel thread
        }
    }

    private void killLeftovers() throws IOException {
        Set<ProcessHandle> left = new LinkedHashSet<>(leftovers());
        for (Path procs : cgroupDirs().stream().flatMap(DockerLab::walkDeepestFirst)
                .map(d -> d.resolve("cgroup.procs")).filter(Files::exists).toList()) {
            for (String pid : Files.readAllLines(procs)) {
                ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(left::add);
            }
        }
        Daemons.killLeftovers(left, "the lab");
    }

    /** Mount points at or under our directory, topmost last, as /proc/self/mountinfo lists them. */
    private List<String> mountsUnderDir() throws IOException {
        String prefix = dir + "/";
        List<String> mounts = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String point = unescape(line.split(" ")[4]);
            if (point.equals(dir.toString()) || point.startsWith(prefix)) {
                mounts.add(point);
            }
        }
        return mounts;
    }

    private static String unescape(String field) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length()) {
                sb.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** dockerd leaves at least exec-root/netns/default (the host-network sandbox) mounted. */
    private void unmountAll() throws IOException {
        for (String point : mountsUnderDir().reversed()) { // a stacked mount point comes twice
            if (run(List.of(Daemons.toolPath("umount"), point), null).code() != 0) {
                check(run(List.of(Daemons.toolPath("umount"), "--lazy", point), null), "umount --lazy " + point);
            }
        }
        List<String> left = mountsUnderDir();
        if (!left.isEmpty()) {
            throw new AssertionError("still mounted under " + dir + ": " + left);
        }
    }

    /** The --cgroup-parent directory in each cgroup hierarchy (v1 controllers or v2). */
    private List<Path> cgroupDirs() throws IOException {
        try (Stream<Path> s = Files.find(Path.of("/sys/fs/cgroup"), 2,
                (p, a) -> a.isDirectory() && p.getFileName().toString().equals(name))) {
            return s.toList();
        }
    }

    private static Stream<Path> walkDeepestFirst(Path top) {
        try (Stream<Path> s = Files.walk(top)) {
            return s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void removeCgroups() throws IOException {
        for (Path top : cgroupDirs()) {
            for (Path d : walkDeepestFirst(top).toList()) {
                Files.delete(d); // rmdir: a cgroup's files go with it
            }
        }
    }

    private void deleteDir() throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        if (!mountsUnderDir().isEmpty()) {
            // Deleting through a mount could reach files that are not ours.
            throw new AssertionError("not deleting " + dir + ": something is still mounted under it");
        }
        try (Stream<Path> s = Files.walk(dir)) { // does not follow symlinks
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    // ---- processes ----------------------------------------------------------------------

    private static Result check(Result r, String what) {
        if (r.code() != 0) {
            throw new AssertionError(what + " exited with " + r.code() + "\nstderr: " + r.err() + "\nstdout: " + r.out());
        }
        return r;
    }

    private static Result run(List<String> cmd, Map<String, String> env) {
        Daemons.Result r = Daemons.run(cmd, e -> {
            scrub(e);
            if (env != null) {
                e.putAll(env);
            }
        }, COMMAND_TIMEOUT);
        return new Result(r.exitCode(), r.stdout(), r.stderr());
    }

    /**
     * The daemons and the client see the lab and nothing else: no DOCKER_HOST or context of the
     * caller, no NOTIFY_SOCKET or socket activation meant for a service manager.
     */
    private static void scrub(Map<String, String> env) {
        env.keySet().removeIf(k -> k.startsWith("DOCKER_") || k.startsWith("CONTAINERD_")
                || k.equals("NOTIFY_SOCKET") || k.startsWith("LISTEN_"));
    }
}
