package dev.gatun.netlink;

import dev.gatun.PrivilegeException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import dev.gatun.testing.UnprivilegedCommit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(FreshNamespaces.class)
class PrivilegeTest {

    @Test
    void missingNetAdminIsOneClearSentence(NetworkNamespace a) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // setpriv drops the capabilities from the bounding set, so the child JVM runs without them.
        Oracle.Result r = Oracle.run(List.of("ip", "netns", "exec", a.name(),
                "setpriv", "--bounding-set=-net_admin,-sys_admin", "--",
                java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                UnprivilegedCommit.class.getName()));

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
        assertThat(lines.get(2)).isEqualTo("cause: null");
        assertThat(Oracle.in(a, "nft", "list", "tables")).doesNotContain("gatun_unprivileged");
    }
}
