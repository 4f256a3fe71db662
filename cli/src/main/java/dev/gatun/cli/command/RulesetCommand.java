package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import picocli.CommandLine.Command;

/** gatun's own tables in nft syntax, read back over netlink and rendered by gatun. */
@Command(name = "ruleset", mixinStandardHelpOptions = true,
        description = "Print gatun's tables in nft syntax, read over netlink (nft -f accepts the text).",
        footer = {"", "Examples:", "  gatun ruleset", "  gatun ruleset > saved.nft && nft -f saved.nft"})
final class RulesetCommand extends Base {

    @Override
    public Integer call() {
        String text = service().ruleset();
        Output o = out();
        if (o.json()) {
            o.json(Json.ruleset(text));
        } else {
            stdout().print(text);
            stdout().flush();
        }
        return ExitCode.OK;
    }
}
