package dev.gatun.driver;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Shared values against a model of how many hold each value: equal values share one id while
 * held, a value no one holds is gone, and ids are reused rather than made for ever. No root.
 */
class SharedValuesPropertiesTest {

    /** A step: acquire this value (when {@code acquire}), else release a holder of the value with that index, if any. */
    record Step(boolean acquire, String value) {}

    @Provide
    Arbitrary<List<Step>> runs() {
        Arbitrary<String> value = Arbitraries.of("a", "b", "c", "d", "e", null);
        return Combinators.combine(Arbitraries.of(true, false), value).as(Step::new).list().ofMaxSize(200);
    }

    @Property(tries = 300)
    void equalValuesShareAnIdWhileHeldAndIdsAreReused(@ForAll("runs") List<Step> run) {
        SharedValues<String> shared = new SharedValues<>();
        Map<String, Integer> holders = new HashMap<>();
        Map<String, Integer> ids = new HashMap<>();
        int most = 0;
        for (Step step : run) {
            String v = step.value();
            if (step.acquire()) {
                int id = shared.acquire(v);
                Integer before = ids.putIfAbsent(v, id);
                assertThat(id).as("the id of %s while held", v).isEqualTo(before == null ? id : before);
                holders.merge(v, 1, Integer::sum);
            } else if (holders.containsKey(v)) {
                shared.release(ids.get(v));
                if (holders.merge(v, -1, Integer::sum) == 0) {
                    holders.remove(v);
                    ids.remove(v);
                }
            }
            most = Math.max(most, holders.size());
            assertThat(shared.size()).isEqualTo(holders.size());
            for (Map.Entry<String, Integer> e : ids.entrySet()) {
                assertThat(shared.get(e.getValue())).isEqualTo(e.getKey());
                assertThat(shared.idOf(e.getKey())).isEqualTo(e.getValue());
            }
            assertThat(shared.idsMade()).as("ids made, at most %d values held at once", most).isLessThanOrEqualTo(most);
        }
        for (String v : List.of("a", "b", "c", "d", "e")) {
            if (!holders.containsKey(v)) {
                assertThat(shared.idOf(v)).as("%s, held by none", v).isEqualTo(-1);
            }
        }
    }

    /** Owners come and go for the whole life of a serve: each one's value is gone with its last holder. */
    @Test
    void valuesThatComeAndGoLeaveNothingBehind() {
        SharedValues<String> shared = new SharedValues<>();
        List<Integer> held = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            held.add(shared.acquire("owner-" + i));
            held.add(shared.acquire("owner-" + i));
            while (held.size() > 6) {
                shared.release(held.removeFirst());
            }
        }
        assertThat(shared.size()).isLessThanOrEqualTo(4);
        assertThat(shared.idsMade()).isLessThanOrEqualTo(5);
    }

    @Test
    void anIdNoOneHoldsCannotBeRead() {
        SharedValues<String> shared = new SharedValues<>();
        int id = shared.acquire("web-1");
        shared.release(id);
        assertThatThrownBy(() -> shared.get(id)).hasMessageContaining("no value");
        assertThatThrownBy(() -> shared.release(id)).hasMessageContaining("no value");
    }
}
