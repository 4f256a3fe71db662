package dev.gatun.driver;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The healer's "when", without a kernel or a thread: events are told to the schedule as the
 * monitor would tell them, the backstop fires when the test says, and repairs fail when it says.
 */
class HealScheduleTest {

    private final HealSchedule schedule = new HealSchedule(HealSchedule.BACKSTOP_MILLIS);

    @Test
    void removedElementsAreRepairedAloneAndOnce() {
        schedule.elementsRemoved("ports4");
        schedule.elementsRemoved("ports4");
        schedule.elementsRemoved("bridges");
        assertThat(schedule.damageSuspected()).isTrue();
        schedule.woke(false);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(false, false, Set.of("ports4", "bridges"),
                false));
        schedule.succeeded();
        assertThat(schedule.take(false)).as("nothing more suspected").isNull();
    }

    @Test
    void aFlushDuringARepairIsRepairedAfterIt() {
        schedule.elementsRemoved("ports4");
        schedule.woke(false);
        HealSchedule.Repair first = schedule.take(false);
        // The repair runs; meanwhile someone flushes the ruleset (a chain removed, another table changed).
        schedule.changed(true, true);
        schedule.succeeded();
        assertThat(first.wholeTable()).isFalse();
        assertThat(schedule.damageSuspected()).as("the healer does not wait for the backstop").isTrue();
        schedule.woke(false);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(true, true, Set.of(), false));
    }

    @Test
    void aFailedRepairIsTriedAgainInFullSoonerWhileItMayPass() {
        schedule.elementsRemoved("ports4");
        schedule.woke(false);
        HealSchedule.Repair r = schedule.take(false);
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            schedule.failed(r, true);
            assertThat(schedule.damageSuspected()).isTrue();
            schedule.woke(false);
            waits.add(schedule.settleMillis() - HealSchedule.SETTLE_MILLIS);
            r = schedule.take(false);
            assertThat(r.wholeTable()).as("what failed may not be what was suspected").isTrue();
        }
        assertThat(waits).containsExactly(100L, 200L, 400L, 800L, 1_000L, 1_000L);
        // A failure that will not pass by itself backs off to the backstop's interval.
        for (int i = 0; i < 4; i++) {
            schedule.failed(r, false);
        }
        assertThat(schedule.settleMillis() - HealSchedule.SETTLE_MILLIS).isEqualTo(HealSchedule.BACKSTOP_MILLIS);
        schedule.succeeded();
        assertThat(schedule.settleMillis()).isEqualTo(HealSchedule.SETTLE_MILLIS);
    }

    @Test
    void theBackstopReadsOtherFirewallsOnlyWhenAskedAndGatunsTableNowAndThen() {
        for (int i = 1; i < HealSchedule.OWN_TABLE_EVERY; i++) {
            schedule.woke(true);
            assertThat(schedule.take(false)).as("backstop " + i + " on a host where everything notifies").isNull();
        }
        schedule.woke(true);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(false, true, Set.of(), false));
        schedule.woke(true);
        assertThat(schedule.take(true)).as("legacy iptables has a table: it sends no notifications")
                .isEqualTo(new HealSchedule.Repair(true, false, Set.of(), false));
    }

    @Test
    void anOverrunReadsEverythingAndSaysSoOnce() {
        schedule.overran();
        schedule.woke(false);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(true, true, Set.of(), true));
        schedule.changed(false, true);
        schedule.woke(false);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(true, false, Set.of(), false));
    }

    @Test
    void afterAnOverrunEverythingIsReadOnceMoreWhenTheNotificationsAreQuiet() {
        schedule.overran();
        schedule.woke(false);
        schedule.take(false);
        schedule.succeeded();
        assertThat(schedule.backstopMillis()).as("the wait for quiet after the overrun's repair")
                .isEqualTo(HealSchedule.RECHECK_AFTER_OVERRUN_MILLIS);
        // A notification in the meantime is repaired as usual, and the read again still waits for quiet.
        schedule.elementsRemoved("ports4");
        schedule.woke(false);
        assertThat(schedule.take(false)).isEqualTo(new HealSchedule.Repair(false, false, Set.of("ports4"), false));
        assertThat(schedule.recheckingAfterOverrun()).isTrue();

        schedule.woke(true);
        assertThat(schedule.take(false)).as("the read again, of everything")
                .isEqualTo(new HealSchedule.Repair(true, true, Set.of(), false));
        assertThat(schedule.backstopMillis()).as("then the usual backstop").isEqualTo(HealSchedule.BACKSTOP_MILLIS);
        schedule.woke(true);
        assertThat(schedule.take(false)).as("an ordinary backstop reads nothing").isNull();
    }
}
