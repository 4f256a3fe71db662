package dev.gatun.bench;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * c-commit-heard is the limit of a follower only if the C floor really listens while it commits:
 * after its "heard" commits it holds a netfilter socket subscribed to the nftables group
 * (NFNLGRP_NFTABLES, 7: bit 0x40) that has read every notification (nothing left queued, none
 * dropped), and it is still running, so decoding them failed nowhere. Its plain "commit" mode,
 * the control, holds no such socket.
 */
@ExtendWith(FreshNamespaces.class)
class HeardCommitTest {

    private static final int NETLINK_NETFILTER = 12;
    private static final long NFTABLES_GROUP = 1L << (7 - 1);

    @Test
    void theHeardCommitsAreHeardAndThePlainOnesAreNot(NetworkNamespace ns) throws Exception {
        Subjects.OnGatunTable.createNetwork(ns);
        Path cFloor = CBuild.build(Path.of("").toAbsolutePath().getParent());
        Process p = new ProcessBuilder("nsenter", "--net=" + ns.path(), cFloor.toString(), "1", Subjects.CONTAINER, "1",
                "bench", "0").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (OutputStream in = p.getOutputStream();
             BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            send(in, "commit 52000 3");
            assertThat(answers(out, 3)).allMatch(line -> line.matches("\\d+"));
            assertThat(nftablesListeners(p.pid())).as("the plain commits' listeners").isEmpty();

            send(in, "heard 52003 3");
            assertThat(answers(out, 3)).allMatch(line -> line.matches("\\d+"));
            // The listener decodes on its own thread: give it a moment to empty its socket.
            List<String[]> listeners = List.of();
            for (int i = 0; i < 100; i++) {
                listeners = nftablesListeners(p.pid());
                if (listeners.size() == 1 && listeners.getFirst()[4].equals("0")) {
                    break;
                }
                Thread.sleep(20);
            }
            assertThat(listeners).as("netfilter sockets of the C floor in the nftables group").hasSize(1);
            assertThat(listeners.getFirst()[4]).as("bytes left unread (Rmem)").isEqualTo("0");
            assertThat(listeners.getFirst()[8]).as("notifications dropped").isEqualTo("0");
            assertThat(p.isAlive()).as("the C floor after decoding the notifications").isTrue();
        } finally {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void send(OutputStream in, String line) throws IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private static List<String> answers(BufferedReader out, int n) throws IOException {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            lines.add(out.readLine());
        }
        return lines;
    }

    /**
     * The rows of /proc/PID/net/netlink (sk, Eth, Pid, Groups, Rmem, Wmem, Dump, Locks, Drops,
     * Inode) of the process's netfilter sockets in the nftables group, its own sockets only.
     */
    private static List<String[]> nftablesListeners(long pid) throws IOException {
        List<String> inodes = new ArrayList<>();
        try (var fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            for (Path fd : fds.toList()) {
                String target = Files.readSymbolicLink(fd).toString();
                if (target.startsWith("socket:[")) {
                    inodes.add(target.substring(8, target.length() - 1));
                }
            }
        }
        List<String[]> out = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/net/netlink")).stream().skip(1).toList()) {
            String[] f = line.trim().split("\\s+");
            if (Integer.parseInt(f[1]) == NETLINK_NETFILTER && (Long.parseLong(f[3], 16) & NFTABLES_GROUP) != 0
                    && inodes.contains(f[9])) {
                out.add(f);
            }
        }
        return out;
    }
}
