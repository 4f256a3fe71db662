package dev.gatun.driver.foreign;

import dev.gatun.netns.Tool;
import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.HostFirewalls;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * iptables-nft's filter table changed over netlink. The oracle is iptables-nft itself: the same
 * lines given to {@code iptables-nft-restore} in a second namespace with the same starting
 * table must leave the same table, read by {@code iptables-nft-save} and, expression for
 * expression, by {@code nft --debug=netlink}; and iptables-nft must take gatun's rules for its
 * own ({@code -D} finds them).
 */
@ExtendWith(FreshNamespaces.class)
class NetlinkFilterTableTest {

    private static void dockerLayout(NetworkNamespace ns, String iptables) {
        HostFirewalls.apply(ns, iptables, HostFirewalls.DOCKER);
    }

    private static XtablesForward forward(NetworkNamespace ns, boolean v6) {
        return new XtablesForward(new Tool(ns, "/usr/sbin:/usr/bin:/sbin:/bin", Duration.ofSeconds(60)), "-nft", v6);
    }

    /** iptables-nft-save without its comment lines and counters. */
    private static String saved(NetworkNamespace ns, String iptables) {
        return Oracle.in(ns, iptables + "-save").lines().filter(l -> !l.startsWith("#"))
                .map(l -> l.replaceAll(" \\[\\d+:\\d+\\]$", "")).collect(Collectors.joining("\n"));
    }

    /** The table's expressions as nft prints them for netlink debugging, without handles and counter values. */
    private static String bytecode(NetworkNamespace ns, String family) {
        return Oracle.in(ns, "nft", "--debug=netlink", "list", "table", family, "filter").lines()
                .filter(l -> l.startsWith(family + " filter ") || l.startsWith("  ["))
                .map(l -> l.startsWith("  [") ? l.replaceAll("pkts \\d+ bytes \\d+", "") : l.replaceAll("( \\d+)+$", ""))
                .collect(Collectors.joining("\n"));
    }

    private void sameAsIptablesNft(NetworkNamespace ours, NetworkNamespace theirs, boolean v6) throws IOException {
        String iptables = v6 ? "ip6tables-nft" : "iptables-nft";
        String family = v6 ? "ip6" : "ip";
        dockerLayout(ours, iptables);
        dockerLayout(theirs, iptables);
        List<String> bridges = List.of("docker0", "br-0123456789ab", "gt-n1");

        XtablesForward.Filter seen = forward(ours, v6).read();
        assertThat(seen.drops()).hasValue("policy DROP, Docker's chains");
        List<String> script = XtablesForward.script(seen, bridges);
        assertThat(script).as("something to write").isNotEmpty();
        assertThat(new NetlinkFilterTable(ours, v6).apply(seen, script)).isEmpty();
        Path file = Files.createTempFile("gatun-restore", ".txt");
        try {
            Files.writeString(file, "*filter\n" + String.join("\n", script) + "\nCOMMIT\n");
            Oracle.in(theirs, iptables + "-restore", "-w", "--noflush", file.toString());
        } finally {
            Files.delete(file);
        }

        assertThat(saved(ours, iptables)).isEqualTo(saved(theirs, iptables))
                .contains("-A DOCKER-USER -j GATUN-ALLOW\n-A DOCKER-USER -j RETURN", "-A GATUN-ALLOW -i br-0123456789ab -j ACCEPT");
        assertThat(bytecode(ours, family)).isEqualTo(bytecode(theirs, family)).contains("jump -> GATUN-ALLOW");
        // Read back as gatun wrote it, nothing left to do; and iptables-nft finds each rule as its own.
        XtablesForward.Filter after = forward(ours, v6).read();
        assertThat(after.jumpInPlace()).isTrue();
        assertThat(XtablesForward.script(after, bridges)).isEmpty();
        Oracle.in(ours, iptables, "-w", "-D", "DOCKER-USER", "-j", "GATUN-ALLOW");
        Oracle.in(ours, iptables, "-w", "-D", "GATUN-ALLOW", "-o", "gt-n1", "-j", "ACCEPT");
    }

    @Test
    void whatGatunWritesIsWhatIptablesNftWritesForTheSameLines(NetworkNamespace ours, NetworkNamespace theirs) throws IOException {
        sameAsIptablesNft(ours, theirs, false);
    }

    @Test
    void andForIp6tablesNft(NetworkNamespace ours, NetworkNamespace theirs) throws IOException {
        sameAsIptablesNft(ours, theirs, true);
    }

    @Test
    void theLastBridgeGoneTakesChainAndJumpAndLeavesDockersRules(NetworkNamespace ours) {
        dockerLayout(ours, "iptables-nft");
        String before = saved(ours, "iptables-nft");
        XtablesForward x = forward(ours, false);
        assertThat(x.sync(List.of("gt-a"))).isPresent();
        assertThat(saved(ours, "iptables-nft")).contains("-A GATUN-ALLOW -o gt-a -j ACCEPT");
        assertThat(x.sync(List.of("gt-a", "gt-b"))).as("a bridge more: the chain rewritten").isPresent();
        assertThat(saved(ours, "iptables-nft")).contains("-A GATUN-ALLOW -i gt-b -j ACCEPT");
        assertThat(x.sync(List.of("gt-a", "gt-b"))).as("in place: nothing sent").isEmpty();
        assertThat(x.sync(List.of()).orElseThrow()).contains("chain GATUN-ALLOW from iptables-nft");
        assertThat(saved(ours, "iptables-nft")).isEqualTo(before);
    }

    @Test
    void aJumpMovedBelowAnotherRuleIsPutBackOnTop(NetworkNamespace ours) {
        dockerLayout(ours, "iptables-nft");
        XtablesForward x = forward(ours, false);
        x.sync(List.of("gt-a"));
        Oracle.in(ours, "iptables-nft", "-w", "-I", "DOCKER-USER", "1", "-s", "10.1.0.0/16", "-j", "DROP");
        assertThat(x.read().jumpInPlace()).isFalse();
        assertThat(x.sync(List.of("gt-a"))).isPresent();
        assertThat(saved(ours, "iptables-nft")).contains(
                "-A DOCKER-USER -j GATUN-ALLOW\n-A DOCKER-USER -s 10.1.0.0/16 -j DROP\n-A DOCKER-USER -j RETURN");
    }

    @Test
    void aChangeBetweenTheReadAndTheWriteFailsTheWholeWriteAndARereadSucceeds(NetworkNamespace ours) {
        dockerLayout(ours, "iptables-nft");
        NetlinkFilterTable table = new NetlinkFilterTable(ours, false);
        XtablesForward.Filter seen = table.read();
        Oracle.in(ours, "iptables-nft", "-w", "-A", "DOCKER-USER", "-s", "10.2.0.0/16", "-j", "DROP");
        Optional<String> failed = table.apply(seen, XtablesForward.script(seen, List.of("gt-a")));
        assertThat(failed).isPresent();
        assertThat(saved(ours, "iptables-nft")).as("nothing of it applied").doesNotContain("GATUN-ALLOW");
        XtablesForward.Filter again = table.read();
        assertThat(table.apply(again, XtablesForward.script(again, List.of("gt-a")))).isEmpty();
        assertThat(saved(ours, "iptables-nft")).contains("-A GATUN-ALLOW -i gt-a -j ACCEPT");
    }

    @Test
    void rejectAndDropRulesAreSeenAsDrops(NetworkNamespace ours) {
        Oracle.in(ours, "iptables-nft", "-w", "-A", "FORWARD", "-i", "eth9", "-j", "REJECT");
        assertThat(forward(ours, false).read().drops()).hasValue("a rule that drops");
        Oracle.in(ours, "iptables-nft", "-w", "-F", "FORWARD");
        Oracle.in(ours, "iptables-nft", "-w", "-A", "FORWARD", "-p", "tcp", "--dport", "25", "-j", "DROP");
        assertThat(forward(ours, false).read().drops()).hasValue("a rule that drops");
        Oracle.in(ours, "iptables-nft", "-w", "-F", "FORWARD");
        assertThat(forward(ours, false).read().drops()).isEmpty();
    }
}
