package dev.gatun.driver;

import dev.gatun.InvalidInputException;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.netns.ReplyServers;
import dev.gatun.testing.Daemons;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Lab;
import dev.gatun.testing.MarkedNetwork;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GATUN_ACCEPT_MARK} and {@code -Dgatun.acceptMark}: the mark bit gatun sets on what it
 * accepts, for another table's forward chain to let through. gatun reads it once per JVM, so
 * each case runs gatun in a child JVM ({@link MarkedNetwork}) and judges what it left in the
 * kernel with nft and real traffic.
 */
@ExtendWith(FreshNamespaces.class)
class AcceptMarkTest {

    private static final String SUBNET = "10.88.0.0/16";

    @Test
    void anotherMarkIsTheOneGatunSetsAndTheOneAnotherTablesDropMustAccept(NetworkNamespace host, NetworkNamespace outside,
                                                                         NetworkNamespace c1) throws Exception {
        Lab.connectOutside(host, outside, SUBNET);
        Oracle.in(host, "nft", "add", "table", "inet", "fw");
        Oracle.in(host, "nft", "add chain inet fw forward { type filter hook forward priority 0; policy drop; }");

        Daemons.Result child = runGatun(Map.of("GATUN_ACCEPT_MARK", "0x4000"), List.of(), host, c1);
        assertThat(child.exitCode()).as(child.toString()).isZero();
        String ip = child.stdout().lines().filter(l -> l.startsWith("ip ")).findFirst().orElseThrow().substring(3);
        assertThat(child.stdout()).as("the rule gatun tells the user to add")
                .contains("drop inet fw forward\t")
                .contains("nft insert rule inet fw forward meta mark & 0x00004000 == 0x00004000 accept")
                .doesNotContain("0x00002000");
        String forward = Oracle.in(host, "nft", "list", "chain", "inet", "gatun", "forward");
        assertThat(forward).as("gatun's forward chain as nft lists it").contains("meta mark set meta mark | 0x00004000")
                .doesNotContain("0x00002000");

        try (ReplyServers servers = new ReplyServers()) {
            servers.tcp(c1, ip, 80, "c1").tcp(outside, "192.0.2.2", 7777, "outside");
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 8080)).as("published port, fw's drop alone")
                    .isFalse();
            assertThat(ReplyServers.tcpAnswers(c1, "192.0.2.2", 7777)).as("out of the container, fw's drop alone").isFalse();

            Oracle.in(host, "nft insert rule inet fw forward meta mark & 0x00002000 == 0x00002000 accept".split(" "));
            assertThat(ReplyServers.tcpAnswers(outside, Lab.HOST_ADDRESS, 8080)).as("with fw accepting the default mark")
                    .isFalse();
            assertThat(ReplyServers.tcpAnswers(c1, "192.0.2.2", 7777)).as("out, fw accepting the default mark").isFalse();

            Oracle.in(host, "nft insert rule inet fw forward meta mark & 0x00004000 == 0x00004000 accept".split(" "));
            assertThat(ReplyServers.tcpFetch(outside, Lab.HOST_ADDRESS, 8080)).as("with fw accepting 0x4000")
                    .isEqualTo("c1");
            assertThat(ReplyServers.tcpFetch(c1, "192.0.2.2", 7777)).as("out, fw accepting 0x4000").isEqualTo("outside");
        }
    }

    @Test
    void aBadMarkIsOneErrorNamingItAndNothingIsMade(NetworkNamespace host, NetworkNamespace c1) {
        Daemons.Result notANumber = runGatun(Map.of("GATUN_ACCEPT_MARK", "lots"), List.of(), host, c1);
        assertThat(notANumber.exitCode()).as(notANumber.toString()).isEqualTo(2);
        assertThat(notANumber.stdout().lines().toList()).containsExactly(InvalidInputException.class.getName(),
                "accept mark 'lots' is not a number (GATUN_ACCEPT_MARK, such as 0x2000)");

        Daemons.Result zero = runGatun(Map.of(), List.of("-Dgatun.acceptMark=0"), host, c1);
        assertThat(zero.exitCode()).as(zero.toString()).isEqualTo(2);
        assertThat(zero.stdout().lines().toList()).containsExactly(InvalidInputException.class.getName(),
                "accept mark '0' must be a non-zero 32-bit mask");

        assertThat(Oracle.in(host, "nft", "list", "tables")).as("tables after the refusals").doesNotContain("gatun");
        assertThat(Oracle.in(host, "ip", "-o", "link", "show")).as("links after the refusals").doesNotContain("gatun");
    }

    /** Runs {@link MarkedNetwork} in a child JVM with {@code env} added to a copy of this one's, without its own mark. */
    private static Daemons.Result runGatun(Map<String, String> env, List<String> jvmOptions, NetworkNamespace host,
                                          NetworkNamespace container) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path")));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of(MarkedNetwork.class.getName(), host.path().toString(), SUBNET, container.path().toString()));
        return Daemons.run(cmd, e -> {
            e.remove("GATUN_ACCEPT_MARK");
            e.putAll(env);
        }, Duration.ofMinutes(2));
    }
}
