package dev.gatun.cli.docker;

import dev.gatun.cli.testing.DockerLab;
import dev.gatun.cli.testing.Outside;
import dev.gatun.cli.testing.Probe;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.Streams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Docker lab itself: a real dockerd runs containers inside the lab's namespace and nowhere
 * else, two labs do not see each other, and close() leaves nothing behind on the host.
 */
// Needs root: skipped (failed with CI=true) before a test reads the host's state, which needs it too.
@ExtendWith(FreshNamespaces.class)
class DockerLabIT {

    @Test
    void runsContainersInsideItsOwnNamespaceAndLeavesNothingBehind() throws Exception {
        String hostBefore = hostState();
        long t0 = System.nanoTime();
        DockerLab lab = DockerLab.start();
        long started = System.nanoTime();
        String labNet;
        try {
            labNet = "net:[" + inode(lab.namespacePath()) + "]";
            assertThat(lab.dockerOk("version", "--format", "{{.Server.Version}}").out()).startsWith("20.10");

            assertThat(lab.docker("run", "--rm", "--network", "none", DockerLab.IMAGE, "true").code()).isZero();
            String none = lab.dockerOk("run", "--rm", "--network", "none", DockerLab.IMAGE,
                    "sh", "-c", "ip -o link; readlink /proc/self/ns/net").out();
            assertThat(linkNames(none)).containsExactly("lo");
            assertThat(none).doesNotContain(labNet);

            // --network host means the lab's namespace: a link made there shows, the host's do not.
            run("ip", "-n", lab.namespace(), "link", "add", "gdkprobe0", "type", "veth", "peer", "name", "gdkprobe1");
            String host = lab.dockerOk("run", "--rm", "--network", "host", DockerLab.IMAGE,
                    "sh", "-c", "ip -o link; readlink /proc/self/ns/net").out();
            assertThat(host).contains(labNet);
            assertThat(linkNames(host)).containsExactlyInAnyOrder("lo", "gdkprobe0", "gdkprobe1");
            List<String> hostOnly = linkNames(run("ip", "-o", "link")).stream().filter(n -> !n.equals("lo")).toList();
            assertThat(hostOnly).isNotEmpty().doesNotContainAnyElementsOf(linkNames(host));

            // The helper reports failures with what the command said.
            assertThatThrownBy(() -> lab.dockerOk("run", "--rm", "--network", "none", DockerLab.IMAGE,
                    "sh", "-c", "echo boom >&2; exit 3"))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("exited with 3").hasMessageContaining("boom");

            // Something for close() to clean up: a running container.
            lab.dockerOk("run", "-d", "--network", "none", DockerLab.IMAGE, "sleep", "600");
        } finally {
            long closing = System.nanoTime();
            lab.close();
            System.out.printf("DockerLab: start %d ms, close %d ms%n",
                    (started - t0) / 1_000_000, (System.nanoTime() - closing) / 1_000_000);
        }
        assertGone(lab);
        assertThat(hostState()).isEqualTo(hostBefore);
    }

    @Test
    @SuppressWarnings("try") // a is closed early on purpose; closing it again is a no-op
    void twoLabsRunSideBySideWithoutSeeingEachOther() throws Exception {
        try (DockerLab a = DockerLab.start(); DockerLab b = DockerLab.start()) {
            assertThat(a.namespace()).isNotEqualTo(b.namespace());
            a.dockerOk("run", "-d", "--name", "only-in-a", "--network", "none", DockerLab.IMAGE, "sleep", "600");
            assertThat(b.dockerOk("ps", "-aq").out()).isBlank();
            assertThat(b.dockerOk("run", "--rm", "--network", "host", DockerLab.IMAGE, "readlink", "/proc/self/ns/net").out())
                    .contains("net:[" + inode(b.namespacePath()) + "]");
            a.close();
            assertGone(a);
            // b keeps working after a is gone.
            assertThat(b.dockerOk("run", "--rm", "--network", "host", DockerLab.IMAGE, "readlink", "/proc/self/ns/net").out())
                    .contains("net:[" + inode(b.namespacePath()) + "]");
        }
    }

    @Test
    void dockersOwnBridgeIptablesAndProxyStayInsideTheLab() throws Exception {
        String hostBefore = hostStateWithIptables();
        DockerLab lab = DockerLab.start(DockerLab.Networking.DOCKER_BRIDGE);
        List<ProcessHandle> proxies = new ArrayList<>();
        try (lab; Outside out = Outside.joinedTo(NetworkNamespace.named(lab.namespace()))) {
            NetworkNamespace ns = NetworkNamespace.named(lab.namespace());
            NetworkNamespace outside = out.ns();
            lab.dockerOk("run", "-d", "--name", "web", "-p", "18080:80", DockerLab.IMAGE,
                    "sh", "-c", "mkdir /www && echo docker-bridge > /www/index.html && httpd -p 80 -h /www && exec sleep 600");

            // Docker's whole apparatus, in the lab's namespace.
            assertThat(linkNames(Oracle.in(ns, "ip", "-o", "link"))).contains("docker0");
            String nat = Oracle.in(ns, "iptables", "-t", "nat", "-S");
            assertThat(nat).contains("-N DOCKER").contains("--dport 18080");
            assertThat(lab.dockerOk("port", "web").out()).contains("80/tcp -> 0.0.0.0:18080");
            assertThat(Oracle.in(ns, "cat", "/proc/sys/net/ipv4/ip_forward").strip()).isEqualTo("1");
            proxies.addAll(ProcessHandle.allProcesses()
                    .filter(ph -> ph.info().command().map(c -> c.endsWith("docker-proxy")).orElse(false))
                    .filter(ph -> inNamespace(ph, ns)).toList());
            assertThat(proxies).as("docker-proxy processes in the lab").isNotEmpty();
            Probe.awaitHttp(outside, Lab.HOST_ADDRESS, 18080, "/index.html", "docker-bridge");

            // And none of it on the host.
            assertThat(hostStateWithIptables()).isEqualTo(hostBefore);
        }
        assertGone(lab);
        assertThat(proxies).as("docker-proxy processes left").noneMatch(ProcessHandle::isAlive);
        assertThat(hostStateWithIptables()).isEqualTo(hostBefore);
    }

    private static boolean inNamespace(ProcessHandle ph, NetworkNamespace ns) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(ph.pid()), "ns", "net")).toString()
                    .equals("net:[" + ns.inode() + "]");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * {@link #hostState()} and what Docker's own networking could touch: the iptables rules of
     * both backends (without counters, which move), the loaded xtables, ip_forward and the
     * bridge-nf-call sysctls (dockerd reads them and sets them to 1 where they are 0). Read only:
     * iptables-save lists only tables that exist.
     */
    static String hostStateWithIptables() throws IOException {
        StringBuilder sb = new StringBuilder(hostState());
        for (String save : List.of("iptables-nft-save", "iptables-legacy-save", "ip6tables-nft-save", "ip6tables-legacy-save")) {
            sb.append("== ").append(save).append('\n');
            if (save.contains("legacy") && !Files.exists(Path.of(save.startsWith("ip6") ? "/proc/net/ip6_tables_names"
                    : "/proc/net/ip_tables_names"))) {
                continue; // it could load a module to find out there is nothing
            }
            try {
                Process p = new ProcessBuilder(save).redirectErrorStream(true).start();
                CompletableFuture<String> reading = Streams.readAsync(p.getInputStream());
                Bounded.waitFor(p, Duration.ofSeconds(60), save);
                String out = Bounded.get(reading, Duration.ofSeconds(10), "the output of " + save);
                out.lines().filter(l -> !l.startsWith("#")).map(l -> l.replaceAll("\\[\\d+:\\d+\\]", "[]"))
                        .forEach(l -> sb.append(l).append('\n'));
            } catch (IOException e) {
                sb.append("(not installed)\n");
            }
        }
        for (String f : List.of("/proc/net/ip_tables_names", "/proc/net/ip6_tables_names", "/proc/sys/net/ipv4/ip_forward",
                "/proc/sys/net/bridge/bridge-nf-call-iptables", "/proc/sys/net/bridge/bridge-nf-call-ip6tables",
                "/proc/sys/net/bridge/bridge-nf-call-arptables")) {
            Path p = Path.of(f);
            sb.append("== ").append(f).append('\n').append(Files.exists(p) ? Files.readString(p) : "(none)\n");
        }
        return sb.toString();
    }

    static void assertGone(DockerLab lab) throws IOException {
        assertThat(lab.namespacePath()).doesNotExist();
        assertThat(run("ip", "netns", "list")).doesNotContain(lab.namespace());
        assertThat(lab.dir()).doesNotExist();
        String mark = lab.dir().toString();
        assertThat(ProcessHandle.allProcesses()
                .filter(ph -> ph.info().commandLine().map(c -> c.contains(mark)).orElse(false))
                .map(ph -> ph.pid() + " " + ph.info().commandLine().orElse("")))
                .as("processes of the lab").isEmpty();
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).as("mounts").doesNotContain(mark);
        try (var cgroups = Files.find(Path.of("/sys/fs/cgroup"), 2, (p, a) -> p.getFileName().toString().equals(lab.namespace()))) {
            assertThat(cgroups.toList()).as("cgroups").isEmpty();
        }
    }

    /** What ci/test compares too: the host's ruleset and links. */
    static String hostState() {
        return run("nft", "list", "ruleset") + run("ip", "-o", "link");
    }

    private static long inode(Path p) throws IOException {
        return ((Number) Files.getAttribute(p, "unix:ino")).longValue();
    }

    /** Names from `ip -o link` lines ("2: eth0@if5: <...>"), as iproute2 and busybox print them. */
    private static List<String> linkNames(String ipOLink) {
        return ipOLink.lines().filter(l -> l.matches("^\\d+: .*"))
                .map(l -> l.split(": ")[1].split("@")[0]).toList();
    }

    private static String run(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            CompletableFuture<String> reading = Streams.readAsync(p.getInputStream());
            int code = Bounded.waitFor(p, Duration.ofSeconds(120), String.join(" ", cmd));
            String out = Bounded.get(reading, Duration.ofSeconds(10), "the output of " + String.join(" ", cmd));
            if (code != 0) {
                throw new AssertionError(Arrays.toString(cmd) + " failed: " + out);
            }
            return out;
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
