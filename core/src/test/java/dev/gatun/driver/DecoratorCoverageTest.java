package dev.gatun.driver;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A decorator must declare every method of each role it implements: one it forgets falls
 * through to the interface's default, which calls another method of the decorator (a publish
 * without a check turning into one with) instead of reaching the driver inside. The compiler
 * holds most of it, as the roles have no defaults but two conveniences of {@link NetworkDriver};
 * this test holds those too, and that the repair role stays out of the decorator (the
 * {@link Healer} inside it runs the repairs, callers cannot).
 */
class DecoratorCoverageTest {

    private static final List<Class<?>> ROLES = List.of(NetworkDriver.class, ContainerSetup.class, OutsidePorts.class,
            BridgeAdoption.class, HostSurvey.class, Repairs.class, GatunDriver.class, HealableDriver.class);

    @Test
    void selfHealingDriverDeclaresEveryMethodOfEveryRoleItImplements() {
        List<String> missing = new ArrayList<>();
        for (Method m : GatunDriver.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            try {
                SelfHealingDriver.class.getDeclaredMethod(m.getName(), m.getParameterTypes());
            } catch (NoSuchMethodException e) {
                missing.add(m.getDeclaringClass().getSimpleName() + "." + m.getName()
                        + Arrays.toString(m.getParameterTypes()));
            }
        }
        assertThat(missing).as("methods of GatunDriver's roles that SelfHealingDriver leaves to the defaults").isEmpty();
    }

    @Test
    void theDecoratorDoesNotOfferTheRepairRole() {
        assertThat(Repairs.class.isAssignableFrom(SelfHealingDriver.class))
                .as("SelfHealingDriver implements Repairs: a caller could run a repair past the healer's lock")
                .isFalse();
    }

    @Test
    void theRolesOnlyDefaultsAreConveniencesOverTheirOwnMethods() {
        List<String> defaults = new ArrayList<>();
        for (Class<?> role : ROLES) {
            for (Method m : role.getDeclaredMethods()) {
                if (m.isDefault()) {
                    defaults.add(role.getSimpleName() + "." + m.getName() + "/" + m.getParameterCount());
                }
            }
        }
        // network(name) finds in networks(); publish without a check asks publish with CHECK.
        assertThat(defaults).containsExactlyInAnyOrder("NetworkDriver.network/1", "NetworkDriver.publish/1");
    }

    @Test
    void everyRoleMethodWithFourOrMoreArgumentsTakesARequestInstead() {
        List<String> wide = new ArrayList<>();
        for (Class<?> role : ROLES) {
            for (Method m : role.getDeclaredMethods()) {
                if (!Modifier.isStatic(m.getModifiers()) && m.getParameterCount() >= 4) {
                    wide.add(role.getSimpleName() + "." + m.getName() + "/" + m.getParameterCount());
                }
            }
        }
        assertThat(wide).as("role methods with four or more positional arguments").isEmpty();
    }
}
