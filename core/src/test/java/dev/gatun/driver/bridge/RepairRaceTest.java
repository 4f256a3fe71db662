package dev.gatun.driver.bridge;

import dev.gatun.driver.Network;
import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Protocol;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.rtnl.MacAddress;
import dev.gatun.rtnl.Prefix;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A repair races another {@code nft} writer that takes a host port the repair is about to put
 * back: the writer commits between the repair's read and its guarded commit. The commit is
 * refused, the repair reads again, and leaves the port to the writer: nothing of the writer's
 * is overwritten, nothing doubled.
 */
@ExtendWith(FreshNamespaces.class)
class RepairRaceTest {

    private static final Network N1 = new Network("n1", "gatun-n1", MacAddress.parse("02:42:0a:58:00:01"),
            List.of(Prefix.parse("10.88.0.0/16")), List.of(InetAddress.ofLiteral("10.88.0.1")), true, false, true, 1500);
    private static final PortMapping ALICE_8080 = new PortMapping("n1", Protocol.TCP, null, 8080,
            InetAddress.ofLiteral("10.88.0.2"), 80, "alice");
    private static final PortMapping ALICE_8081 = new PortMapping("n1", Protocol.TCP, null, 8081,
            InetAddress.ofLiteral("10.88.0.2"), 81, "alice");

    @Test
    void aFullRepairLeavesAPortTakenDuringItToItsTaker(NetworkNamespace host) {
        racedRepair(host, (firewall, wanted) -> firewall.restore(List.of(N1), wanted));
    }

    @Test
    void aRepairOfOneMapLeavesAPortTakenDuringItToItsTaker(NetworkNamespace host) {
        racedRepair(host, (firewall, wanted) -> firewall.restoreElements(List.of(N1), wanted, Set.of("ports4")));
    }

    private static void racedRepair(NetworkNamespace host, BiFunction<NftablesFirewall, List<PortMapping>, Firewall.Restored> repair) {
        AtomicInteger reads = new AtomicInteger();
        NftablesFirewall firewall = new NftablesFirewall(host, () -> {
            if (reads.incrementAndGet() == 1) {
                Oracle.in(host, "nft", "add", "element", "inet", "gatun", "ports4",
                        "{ tcp . 8080 comment \"bob\" : 10.88.0.3 . 80 }");
            }
        });
        firewall.ensure(List.of(N1));
        firewall.network(BridgeRules.of(N1), true);

        Firewall.Restored restored = repair.apply(firewall, List.of(ALICE_8080, ALICE_8081));
        List<String> repaired = restored.lines();

        assertThat(reads).as("the refused attempt and the one after a fresh read").hasValue(2);
        assertThat(repaired).singleElement().asString().contains("8081").contains("alice");
        assertThat(restored.mappings()).as("what it put back, for the UDP clients' sake").containsExactly(ALICE_8081);
        String ports4 = Oracle.in(host, "nft", "list", "map", "inet", "gatun", "ports4");
        assertThat(ports4).containsOnlyOnce("tcp . 8080 ").contains("tcp . 8080 comment \"bob\" : 10.88.0.3 . 80")
                .containsOnlyOnce("tcp . 8081 comment \"alice\" : 10.88.0.2 . 81");
        assertThat(firewall.restore(List.of(N1), List.of(ALICE_8080, ALICE_8081))).as("a repair after")
                .isEqualTo(Firewall.Restored.NOTHING);
    }
}
