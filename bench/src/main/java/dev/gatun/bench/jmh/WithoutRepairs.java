package dev.gatun.bench.jmh;

import dev.gatun.driver.PortMapping;
import dev.gatun.driver.Repairs;
import dev.gatun.nft.RulesetEvent;

import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

/**
 * Repairs that do nothing: under {@link dev.gatun.driver.SelfHealingDriver} they measure serve
 * without the repairs its healer makes. The driver still follows the ruleset, as in serve.
 */
record WithoutRepairs(Repairs inner) implements Repairs {

    @Override
    public List<String> repair(List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairOwnRuleset(List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairElements(Collection<String> sets, List<PortMapping> mappings) {
        return List.of();
    }

    @Override
    public List<String> repairOtherFirewalls() {
        return List.of();
    }

    @Override
    public boolean otherFirewallsNeedPolling() {
        return inner.otherFirewallsNeedPolling();
    }

    @Override
    public Consumer<RulesetEvent> followRuleset() {
        return inner.followRuleset();
    }
}
