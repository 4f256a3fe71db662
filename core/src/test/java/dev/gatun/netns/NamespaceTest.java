package dev.gatun.netns;

import dev.gatun.testing.Bounded;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(FreshNamespaces.class)
class NamespaceTest {

    @Test
    void createdNamespaceIsSeenByIproute2AndGoneAfterDelete() {
        String name = FreshNamespaces.PREFIX + "own-" + ProcessHandle.current().pid();
        try {
            NetworkNamespace ns = NamedNamespaces.create(name);
            assertThat(Oracle.host("ip", "netns", "list")).contains(name);
            assertThat(NamedNamespaces.list()).contains(name);
            assertThat(ns.inode()).isNotEqualTo(NetworkNamespace.current().inode());
            // A fresh namespace has only a loopback interface.
            assertThat(Oracle.in(ns, "ip", "-o", "link", "show")).contains("lo:").doesNotContain("eth0");
        } finally {
            if (NamedNamespaces.exists(name)) {
                NamedNamespaces.delete(name);
            }
        }
        assertThat(Oracle.host("ip", "netns", "list")).doesNotContain(name);
        assertThat(NamedNamespaces.exists(name)).isFalse();
    }

    @Test
    void creatingAnExistingNameFailsAndNamesIt(NetworkNamespace a) {
        assertThatThrownBy(() -> NamedNamespaces.create(a.name()))
                .isInstanceOf(NamespaceExistsException.class)
                .hasMessageContaining(a.name());
    }

    @Test
    void taskRunsInsideTheNamespace(NetworkNamespace a) throws IOException {
        String inside = a.call(() -> Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString());
        assertThat(inside).isEqualTo("net:[" + a.inode() + "]");
        assertThat(inside).isNotEqualTo(Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString());
    }

    @Test
    void thousandOperationsFromVirtualThreadsLeaveEveryThreadWhereItStarted(NetworkNamespace a, NetworkNamespace b)
            throws Exception {
        String expectA = "net:[" + a.inode() + "]";
        String expectB = "net:[" + b.inode() + "]";
        List<Future<String>> results = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 1000; i++) {
                NetworkNamespace target = i % 2 == 0 ? a : b;
                expected.add(i % 2 == 0 ? expectA : expectB);
                results.add(executor.submit(() -> target.call(
                        () -> Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")).toString())));
            }
        }
        for (int i = 0; i < results.size(); i++) {
            assertThat(Bounded.get(results.get(i), "operation " + i)).as("operation %d", i).isEqualTo(expected.get(i));
        }
        String home = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
        Map<String, String> strays = new HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    String ns = Files.readSymbolicLink(task.resolve("ns/net")).toString();
                    if (!ns.equals(home)) {
                        strays.put(task.getFileName().toString(), ns);
                    }
                } catch (IOException gone) {
                    // the thread ended while we looked
                }
            }
        }
        assertThat(strays).as("threads not in the process's own network namespace").isEmpty();
    }
}
