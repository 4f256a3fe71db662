package dev.gatun.driver;

import dev.gatun.nft.RulesetEvent;
import dev.gatun.nft.RulesetEvent.Kind;
import dev.gatun.nft.value.Family;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/** What the healer makes of one notification, before it looks at who sent it. */
class DamageTriageTest {

    private static RulesetEvent in(String table, Kind kind, String name) {
        return new RulesetEvent(kind, Family.INET, table, name);
    }

    @Test
    void elementsRemovedFromGatunsTableMarkOnlyTheirSet() {
        DamageTriage.Damage d = DamageTriage.of(in("gatun", Kind.DELETE_ELEMENTS, "tcp4"));
        assertThat(d).isNotNull();
        assertThat(d.kind()).isEqualTo(HealListener.Cause.OWN_TABLE);
        assertThat(d.elementsOf()).isEqualTo("tcp4");
        assertThat(d.own()).isTrue();
        assertThat(d.foreign()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"DELETE_TABLE", "DELETE_CHAIN", "DELETE_RULE", "DELETE_SET", "NEW_RULE"})
    void anyOtherRemovalOrAnAddedRuleInGatunsTableMarksTheWholeTable(Kind kind) {
        DamageTriage.Damage d = DamageTriage.of(in("gatun", kind, "x"));
        assertThat(d).as(kind.name()).isNotNull();
        assertThat(d.ownRemoval()).isTrue();
        assertThat(d.elementsOf()).as("a set alone is marked only for removed elements").isNull();
        assertThat(d.cause()).contains("gatun's table");
    }

    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"NEW_TABLE", "NEW_CHAIN", "NEW_SET", "NEW_ELEMENTS"})
    void whatGatunsTableGainsDamagesNothing(Kind kind) {
        assertThat(DamageTriage.of(in("gatun", kind, "x"))).as(kind.name()).isNull();
    }

    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"NEW_ELEMENTS", "DELETE_ELEMENTS"})
    void anotherToolsElementsDamageNothing(Kind kind) {
        assertThat(DamageTriage.of(in("f2b-table", kind, "addr-set-sshd"))).as(kind.name()).isNull();
    }

    @ParameterizedTest
    @EnumSource(value = Kind.class, names = {"NEW_TABLE", "DELETE_TABLE", "NEW_CHAIN", "DELETE_CHAIN", "NEW_RULE",
            "DELETE_RULE", "NEW_SET", "DELETE_SET"})
    void anotherTablesStructureIsForeignDamage(Kind kind) {
        DamageTriage.Damage d = DamageTriage.of(in("firewalld", kind, "x"));
        assertThat(d).as(kind.name()).isNotNull();
        assertThat(d.kind()).isEqualTo(HealListener.Cause.OTHER_TABLE);
        assertThat(d.foreign()).isTrue();
        assertThat(d.own()).isFalse();
        assertThat(d.cause()).contains("firewalld");
    }

    @Test
    void lostNotificationsMayHaveDamagedAnything() {
        DamageTriage.Damage d = DamageTriage.of(new RulesetEvent(Kind.OVERRUN, null, null, null));
        assertThat(d).isNotNull();
        assertThat(d.kind()).isEqualTo(HealListener.Cause.EVENTS_LOST);
        assertThat(d.overrun()).isTrue();
        assertThat(d.foreign()).as("another table may have changed too").isTrue();
    }

    @Test
    void theEndOfATransactionIsNoDamageOfItsOwn() {
        assertThat(DamageTriage.of(new RulesetEvent(Kind.NEW_GENERATION, null, null, null, 4242, 7))).isNull();
    }
}
