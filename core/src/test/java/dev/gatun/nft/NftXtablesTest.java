package dev.gatun.nft;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A ruleset iptables-nft wrote, as on a Docker host: xtables matches and targets, which gatun
 * does not decode, do not stop it from listing, rendering, or writing the rules again.
 */
@ExtendWith(FreshNamespaces.class)
class NftXtablesTest {

    private static final List<List<String>> RULES = List.of(
            List.of("iptables-nft", "-w", "-A", "FORWARD", "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", "-j", "ACCEPT"),
            List.of("iptables-nft", "-w", "-A", "FORWARD", "-i", "br0", "-m", "comment", "--comment", "from br0", "-j", "ACCEPT"),
            List.of("iptables-nft", "-w", "-t", "nat", "-A", "PREROUTING", "-p", "tcp", "--dport", "8080",
                    "-j", "DNAT", "--to-destination", "10.0.0.2:80"),
            List.of("iptables-nft", "-w", "-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "REJECT",
                    "--reject-with", "tcp-reset"),
            List.of("iptables-nft", "-w", "-A", "INPUT", "-p", "udp", "-m", "multiport", "--dports", "53,67", "-j", "REJECT"),
            List.of("ip6tables-nft", "-w", "-A", "FORWARD", "-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP"));

    @Test
    void rulesWithXtablesExpressionsAreListedWithThem(NetworkNamespace ns) {
        addRules(ns);

        List<Rule> rules;
        try (Nftables nft = Nftables.open(ns)) {
            rules = nft.list().rules();
        }

        assertThat(rules).extracting(NftRenderer::render).containsExactlyInAnyOrder(
                "xt match conntrack counter accept",
                "iifname \"br0\" xt match comment counter accept",
                "tcp dport 8080 counter xt target DNAT",
                "tcp dport 22 counter xt target REJECT",
                "meta l4proto udp xt match multiport counter xt target REJECT",
                "xt match conntrack counter drop");
        assertThat(rules.stream().flatMap(r -> r.expressions().stream()).filter(Opaque.class::isInstance)
                .map(e -> ((Opaque) e).kind()).collect(Collectors.toList()))
                .containsExactlyInAnyOrder("match", "match", "target", "target", "match", "target", "match");
    }

    @Test
    void nftRefusesTheRenderedRulesetInsteadOfApplyingOtherRules(NetworkNamespace ns, NetworkNamespace other)
            throws IOException {
        addRules(ns);
        String rendered;
        try (Nftables nft = Nftables.open(ns)) {
            rendered = NftRenderer.render(nft.list());
        }

        Oracle.Result applied = Oracle.nftFile(other, rendered);
        assertThat(applied.exitCode()).as(rendered).isNotZero();
        assertThat(applied.stderr()).contains("unsupported xtables compat expression");
        assertThat(Oracle.in(other, "nft", "list", "ruleset")).isEmpty();
    }

    @Test
    void rulesReadBackAreAddedAgainAsTheyWere(NetworkNamespace ns) {
        addRules(ns);
        String nftBefore = Oracle.in(ns, "nft", "list", "ruleset");
        String saveBefore = saved(ns);

        try (Nftables nft = Nftables.open(ns)) {
            List<Rule> rules = nft.list().rules();
            Transaction tx = nft.transaction();
            rules.forEach(tx::delete);
            rules.forEach(r -> tx.add(r.withoutHandle()));
            tx.commit();
            assertThat(handles(nft.list().rules())).as("the rules were replaced").doesNotContainAnyElementsOf(handles(rules));
        }

        assertThat(Oracle.in(ns, "nft", "list", "ruleset")).isEqualTo(nftBefore);
        assertThat(saved(ns)).isEqualTo(saveBefore);
    }

    private static void addRules(NetworkNamespace ns) {
        for (List<String> rule : RULES) {
            Oracle.in(ns, rule.toArray(String[]::new));
        }
    }

    /** What iptables-nft-save and ip6tables-nft-save print, without their dated comment lines. */
    private static String saved(NetworkNamespace ns) {
        String both = Oracle.in(ns, "iptables-nft-save") + Oracle.in(ns, "ip6tables-nft-save");
        return both.lines().filter(l -> !l.startsWith("#")).collect(Collectors.joining("\n"));
    }

    /** Handles count per table. */
    private static List<String> handles(List<Rule> rules) {
        return rules.stream().map(r -> r.family() + " " + r.table() + " " + r.handle()).toList();
    }
}
