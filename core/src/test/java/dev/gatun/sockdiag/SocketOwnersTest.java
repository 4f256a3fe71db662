package dev.gatun.sockdiag;

import dev.gatun.bindings.internal.libc_h;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.Rtnetlink;
import dev.gatun.testing.FreshNamespaces;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which process holds a socket, read from /proc: a listener this JVM opened in a fresh
 * namespace, found by the kernel's own answer (sock_diag) and then among the processes.
 */
@ExtendWith(FreshNamespaces.class)
class SocketOwnersTest {

    @Test
    void aSocketIsHeldByTheNamedProcessThatHoldsItAndByNoOther(NetworkNamespace ns) throws Exception {
        try (Rtnetlink rt = Rtnetlink.open(ns)) {
            rt.setUp("lo", true);
        }
        String self = Files.readString(Path.of("/proc/self/comm")).strip();
        try (ServerSocketChannel listener = ns.call(() -> ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.ofLiteral("127.0.0.1"), 8080)));
             HostSockets sockets = HostSockets.open(ns)) {
            long inode = sockets.holding(libc_h.IPPROTO_TCP, List.of(8080), true).getFirst().inode();
            // A process newer than this JVM, with the name asked for too, that holds nothing of it:
            // the newest-first read must go on past it to the older holder.
            Process newer = new ProcessBuilder("sleep", "30").start();
            try {
                assertThat(SocketOwners.heldBy(Set.of(inode), Set.of("sleep", self))).containsExactly(inode);
                assertThat(SocketOwners.heldBy(Set.of(inode), Set.of("sleep"))).as("held by %s only", self).isEmpty();
                assertThat(SocketOwners.heldBy(Set.of(inode, Long.MAX_VALUE), Set.of(self))).as("an inode nobody holds")
                        .containsExactly(inode);
                assertThat(SocketOwners.heldBy(Set.of(), Set.of(self))).isEmpty();
                assertThat(SocketOwners.of(Set.of(inode))).as("the report names the same holder")
                        .containsEntry(inode, self + " (pid " + ProcessHandle.current().pid() + ")");
            } finally {
                newer.destroyForcibly();
                newer.waitFor(10, TimeUnit.SECONDS);
            }
            assertThat(listener.isOpen()).isTrue();
        }
    }
}
