package dev.gatun.driver.bridge;

import dev.gatun.driver.PortMapping;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.Nftables;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * gatun's listings (`gatun ls`, the API's ports, a CNI DEL's) read the kernel every time, through
 * one socket the firewall keeps from its first listing until it is closed: opening one, which
 * enters the namespace, cost more than the reading. What other processes do between two listings
 * is in the second, read with nft as the oracle.
 */
@ExtendWith(FreshNamespaces.class)
class NftablesListingTest {

    @Test
    void everyListingReadsTheKernelThroughOneKeptSocket(NetworkNamespace host) throws IOException {
        Set<Long> before = socketsOfThisProcess();
        NftablesFirewall firewall = new NftablesFirewall(host);
        try {
            assertThat(firewall.mappings()).as("no table yet: no mappings").isEmpty();
            Set<Long> kept = new HashSet<>(socketsOfThisProcess());
            kept.removeAll(before);
            assertThat(kept).as("the socket kept after the first listing").hasSize(1);

            try (Nftables nft = Nftables.open(host)) {
                GatunRuleset.create(nft);
            }
            Oracle.in(host, "nft", "add", "element", "inet", "gatun", "ports4",
                    "{ tcp . 8080 comment \"web\" : 10.88.0.2 . 80 }");
            assertThat(firewall.mappings()).as("an element another process added")
                    .extracting(PortMapping::hostPort, PortMapping::owner).containsExactly(tuple(8080, "web"));

            Oracle.in(host, "nft", "delete", "element", "inet", "gatun", "ports4", "{ tcp . 8080 }");
            assertThat(firewall.mappings()).as("the element another process deleted").isEmpty();

            Oracle.in(host, "nft", "delete", "table", "inet", "gatun");
            for (int i = 0; i < 20; i++) {
                assertThat(firewall.mappings()).isEmpty();
            }
            Set<Long> now = new HashSet<>(socketsOfThisProcess());
            now.removeAll(before);
            assertThat(now).as("twenty-three listings later, still the one socket").isEqualTo(kept);
        } finally {
            firewall.close();
        }
        Set<Long> after = new HashSet<>(socketsOfThisProcess());
        after.removeAll(before);
        assertThat(after).as("closed with the firewall").isEmpty();
    }

    /** The inodes of the sockets this process holds, from /proc/self/fd. */
    private static Set<Long> socketsOfThisProcess() throws IOException {
        Set<Long> out = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        out.add(Long.parseLong(target.substring("socket:[".length(), target.length() - 1)));
                    }
                } catch (IOException e) {
                    // the stream's own descriptor, gone once read
                }
            }
        }
        return out;
    }
}
