package dev.gatun.cli.service;

import dev.gatun.driver.GatunDriver;

import java.util.function.Function;

/** Lends a driver for the host namespace: a new one (closed after) or a running serve's own (never closed). */
@FunctionalInterface
public interface Drivers {

    <T> T with(Function<GatunDriver, T> work);

    /** Lends {@code driver} itself, which the caller owns and closes. */
    static Drivers of(GatunDriver driver) {
        return new Drivers() {
            @Override
            public <T> T with(Function<GatunDriver, T> work) {
                return work.apply(driver);
            }
        };
    }
}
