package dev.gatun.testing;

import dev.gatun.driver.GatunDriver;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.util.Map;

/**
 * A {@link GatunDriver} for tests that need no kernel: it answers the calls a test names,
 * runs the contract's default methods as written, and fails the test on any other call, so a
 * test says exactly what the code under it may ask the driver.
 */
public final class StandInDriver {

    /** What one call answers, from its arguments; it may throw, as a driver would. */
    @FunctionalInterface
    public interface Answer {
        Object answer(Object[] args) throws Throwable;
    }

    private StandInDriver() {}

    public static GatunDriver answering(Map<String, Answer> answers) {
        InvocationHandler handler = (proxy, method, args) -> {
            Answer answer = answers.get(method.getName());
            if (answer != null) {
                return answer.answer(args);
            }
            if (method.isDefault()) {
                return InvocationHandler.invokeDefault(proxy, method, args);
            }
            throw new AssertionError("the code under test called " + method.getName()
                    + ", which this stand-in driver does not answer");
        };
        return (GatunDriver) Proxy.newProxyInstance(GatunDriver.class.getClassLoader(),
                new Class<?>[] {GatunDriver.class}, handler);
    }
}
