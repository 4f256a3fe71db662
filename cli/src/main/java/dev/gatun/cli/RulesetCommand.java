package dev.gatun.cli;

import dev.gatun.nft.Family;
import dev.gatun.nft.NftRenderer;
import dev.gatun.nft.Nftables;
import dev.gatun.nft.Ruleset;
import dev.gatun.nft.Table;
import picocli.CommandLine.Command;

import java.util.Map;

/** gatun's own tables in nft syntax, read back over netlink and rendered by gatun. */
@Command(name = "ruleset", mixinStandardHelpOptions = true,
        description = "Print gatun's tables in nft syntax, read over netlink (nft -f accepts the text).",
        footer = {"", "Examples:", "  gatun ruleset", "  gatun ruleset > saved.nft && nft -f saved.nft"})
final class RulesetCommand extends Base {

    @Override
    public Integer call() {
        String text;
        try (Nftables nft = Nftables.open(root().host())) {
            Ruleset r = nft.list(Table.of(Family.INET, "gatun"));
            text = NftRenderer.render(r);
        }
        Output o = out();
        if (o.json()) {
            o.json(Map.of("ruleset", text));
        } else {
            spec.commandLine().getOut().print(text);
            spec.commandLine().getOut().flush();
        }
        return ExitCode.OK;
    }
}
