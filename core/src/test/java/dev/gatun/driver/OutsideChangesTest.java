package dev.gatun.driver;

import dev.gatun.nft.value.Family;
import dev.gatun.nft.RulesetEvent;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.gatun.nft.RulesetEvent.Kind.DELETE_CHAIN;
import static dev.gatun.nft.RulesetEvent.Kind.DELETE_ELEMENTS;
import static dev.gatun.nft.RulesetEvent.Kind.DELETE_RULE;
import static dev.gatun.nft.RulesetEvent.Kind.DELETE_SET;
import static dev.gatun.nft.RulesetEvent.Kind.DELETE_TABLE;
import static dev.gatun.nft.RulesetEvent.Kind.NEW_RULE;
import static org.assertj.core.api.Assertions.assertThat;

class OutsideChangesTest {

    private static RulesetEvent e(RulesetEvent.Kind kind, String name) {
        return new RulesetEvent(kind, Family.INET, "gatun", name);
    }

    @Test
    void aFlushIsOneLineThatCountsWhatWent() {
        assertThat(OutsideChanges.describe(List.of(e(DELETE_RULE, "forward"), e(DELETE_RULE, "forward"),
                e(DELETE_SET, "ports4"), e(DELETE_SET, "ports6"), e(DELETE_CHAIN, "forward"), e(DELETE_TABLE, null))))
                .isEqualTo("deleted 2 rules, 2 sets, chain forward, the table inet gatun");
    }

    @Test
    void elementsNameTheirSetsAndAnAddedRuleIsSaidApart() {
        assertThat(OutsideChanges.describe(List.of(e(DELETE_ELEMENTS, "ports4"), e(DELETE_ELEMENTS, "ports4"))))
                .isEqualTo("deleted elements of set ports4");
        assertThat(OutsideChanges.describe(List.of(e(DELETE_ELEMENTS, "a"), e(DELETE_ELEMENTS, "b"), e(NEW_RULE, "forward"))))
                .isEqualTo("deleted elements of sets a, b; added a rule");
    }
}
