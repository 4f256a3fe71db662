package dev.gatun.nft;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.nft.expr.Opaque;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Statements nft writes that gatun has no record for (a limit, a payload write, meta and ct
 * sets other than the mark, a dynamic set update with a counter): listed as opaque
 * expressions, rendered so that nft refuses the text, and added again as they were read.
 */
@ExtendWith(FreshNamespaces.class)
class NftForeignStatementsTest {

    private static final String SCRIPT = """
            table inet other {
            	set seen {
            		type ipv4_addr
            		flags dynamic
            	}
            	chain input {
            		type filter hook input priority 0; policy accept;
            		limit rate 10/second accept
            		tcp dport set 80
            		meta priority set 1:2
            		ct mark set 0x00000005
            		update @seen { ip saddr counter }
            		ip saddr @seen accept
            	}
            }
            """;

    @Test
    void areListedAsOpaqueAndAddedAgainAsTheyWere(NetworkNamespace ns) throws IOException {
        NftCorpusTest.applyWithNft(ns, SCRIPT);
        String before = Oracle.in(ns, "nft", "list", "ruleset");

        try (Nftables nft = Nftables.open(ns)) {
            List<Rule> rules = nft.list().rules();
            assertThat(rules.stream().flatMap(r -> r.expressions().stream()).filter(Opaque.class::isInstance)
                    .map(e -> ((Opaque) e).kind())).containsExactly("limit", "payload", "meta", "ct", "dynset");
            Transaction tx = nft.transaction();
            rules.forEach(tx::delete);
            rules.forEach(r -> tx.add(r.withoutHandle()));
            tx.commit();
            assertThat(nft.list().rules()).extracting(Rule::handle).doesNotContainAnyElementsOf(
                    rules.stream().map(Rule::handle).toList());
        }

        assertThat(Oracle.in(ns, "nft", "list", "ruleset")).isEqualTo(before);
    }

    @Test
    void nftRefusesTheRenderedRuleset(NetworkNamespace ns, NetworkNamespace other) throws IOException {
        NftCorpusTest.applyWithNft(ns, SCRIPT);
        String rendered;
        try (Nftables nft = Nftables.open(ns)) {
            rendered = NftRenderer.render(nft.list());
        }

        Oracle.Result applied = Oracle.nftFile(other, rendered);
        assertThat(applied.exitCode()).as(rendered).isNotZero();
        assertThat(applied.stderr()).contains("unexpected junk");
        assertThat(Oracle.in(other, "nft", "list", "ruleset")).isEmpty();
    }
}
