package dev.gatun.driver;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decorator of {@link NetworkDriver} must declare every method of the contract itself: one it
 * forgets falls through to the interface's default, which calls another method of the decorator
 * (a narrow repair turning into the full one) or throws, instead of reaching the driver inside.
 */
class DecoratorCoverageTest {

    @Test
    void selfHealingDriverDeclaresEveryMethodOfTheContract() {
        List<String> missing = new ArrayList<>();
        for (Method m : NetworkDriver.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            try {
                SelfHealingDriver.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getName() + Arrays.toString(m.getParameterTypes()));
            }
        }
        assertThat(missing).as("methods of NetworkDriver that SelfHealingDriver leaves to the defaults").isEmpty();
    }
}
