package dev.gatun.netlink;

import dev.gatun.PrivilegeException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.UnprivilegedCommit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(FreshNamespaces.class)
class PrivilegeTest {

    /** The child JVM's output, run in {@code a} without CAP_NET_ADMIN and CAP_SYS_ADMIN. */
    private static Oracle.Result unprivileged(NetworkNamespace a, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // setpriv drops the capabilities from the bounding set, so the child JVM runs without them.
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", a.name(),
                "setpriv", "--bounding-set=-net_admin,-sys_admin", "--",
                java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                UnprivilegedCommit.class.getName()));
        command.addAll(List.of(args));
        return Oracle.run(command);
    }

    @Test
    void aReadWithoutNetAdminNamesItsNamespaceOnce(NetworkNamespace a) {
        Oracle.Result r = unprivileged(a, "read");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        List<String> lines = r.stdout().lines().toList();
        assertThat(lines.get(0)).isEqualTo(PrivilegeException.class.getName());
        assertThat(lines.get(1)).startsWith("gatun needs root").contains("read the ruleset generation");
        assertThat(lines.get(1).split("network namespace", -1)).as("'network namespace' once in: " + lines.get(1))
                .hasSize(2);
    }

    @Test
    void missingNetAdminIsOneClearSentence(NetworkNamespace a) {
        Oracle.Result r = unprivileged(a);

        assertThat(r.exitCode()).as(r.stderr()).isZero();
        List<String> lines = r.stdout().lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).isEqualTo(PrivilegeException.class.getName());
        assertThat(lines.get(1))
                .startsWith("gatun needs root")
                .contains("CAP_NET_ADMIN")
                .contains("add table ip gatun_unprivileged")
                .contains("EPERM")
                .doesNotContain("\n");
        assertThat(lines.get(1).split("network namespace", -1)).as("'network namespace' once").hasSize(2);
        assertThat(lines.get(2)).isEqualTo("cause: null");
        assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("gatun_unprivileged");
    }
}
