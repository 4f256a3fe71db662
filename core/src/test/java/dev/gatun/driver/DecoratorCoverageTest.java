package dev.gatun.driver;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decorator of {@link GatunDriver} must declare every method of the contract itself: one it
 * forgets falls through to the interface's default, which calls another method of the decorator
 * (a narrow repair turning into the full one) instead of reaching the driver inside. The
 * compiler holds most of it, as {@link GatunDriver} has no defaults and {@link NetworkDriver}
 * only two conveniences; this test holds those too.
 */
class DecoratorCoverageTest {

    @Test
    void selfHealingDriverDeclaresEveryMethodOfTheContract() {
        List<String> missing = new ArrayList<>();
        for (Method m : GatunDriver.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            try {
                SelfHealingDriver.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getName() + Arrays.toString(m.getParameterTypes()));
            }
        }
        assertThat(missing).as("methods of GatunDriver that SelfHealingDriver leaves to the defaults").isEmpty();
    }

    @Test
    void theContractsOnlyDefaultsAreConveniencesOverItsOwnMethods() {
        List<String> defaults = new ArrayList<>();
        for (Class<?> contract : List.of(NetworkDriver.class, GatunDriver.class)) {
            for (Method m : contract.getDeclaredMethods()) {
                if (m.isDefault()) {
                    defaults.add(contract.getSimpleName() + "." + m.getName() + "/" + m.getParameterCount());
                }
            }
        }
        // network(name) finds in networks(); publish without a check asks publish with CHECK.
        assertThat(defaults).containsExactlyInAnyOrder("NetworkDriver.network/1", "NetworkDriver.publish/4");
    }
}
