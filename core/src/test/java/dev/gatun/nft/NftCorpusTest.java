package dev.gatun.nft;

import dev.gatun.netns.NetworkNamespace;
import dev.gatun.testing.FreshNamespaces;
import dev.gatun.testing.NftJson;
import dev.gatun.testing.Oracle;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The real nft is the judge. For each script: what gatun's API builds lists exactly as what
 * nft -f made from the script; and what gatun reads back and renders, applied with nft -f,
 * lists exactly as the original.
 */
@ExtendWith(FreshNamespaces.class)
class NftCorpusTest {

    static Stream<String> scripts() {
        return NftCorpus.BUILDERS.keySet().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void gatunBuildsWhatNftBuildsFromTheScript(String script, NetworkNamespace a, NetworkNamespace b) throws IOException {
        applyWithNft(a, script(script));

        try (Nftables nft = Nftables.open(b)) {
            Transaction tx = nft.transaction();
            NftCorpus.BUILDERS.get(script).accept(tx);
            tx.commit();
        }

        assertThat(NftJson.ruleset(b).toPrettyString()).isEqualTo(NftJson.ruleset(a).toPrettyString());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void renderedReadBackAppliesToTheSameRuleset(String script, NetworkNamespace a, NetworkNamespace c) throws IOException {
        applyWithNft(a, script(script));

        String rendered;
        try (Nftables nft = Nftables.open(a)) {
            rendered = NftRenderer.render(nft.list());
        }
        applyWithNft(c, rendered);

        assertThat(NftJson.ruleset(c).toPrettyString()).as(rendered).isEqualTo(NftJson.ruleset(a).toPrettyString());
    }

    static String script(String name) throws IOException {
        try (InputStream in = NftCorpusTest.class.getResourceAsStream("/nft-corpus/" + name + ".nft")) {
            assertThat(in).as("nft-corpus/%s.nft", name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    static void applyWithNft(NetworkNamespace ns, String text) throws IOException {
        Path f = Files.createTempFile("gatun-corpus", ".nft");
        try {
            Files.writeString(f, text);
            Oracle.in(ns, "nft", "-f", f.toString());
        } finally {
            Files.delete(f);
        }
    }
}
