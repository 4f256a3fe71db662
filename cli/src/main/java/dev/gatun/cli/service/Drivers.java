package dev.gatun.cli.service;

import dev.gatun.facade.Gatun;
import dev.gatun.driver.GatunDriver;
import dev.gatun.netns.NetworkNamespace;

import java.util.function.Function;

/** Lends a driver for the host namespace: a new one (closed after) or a running serve's own (never closed). */
@FunctionalInterface
public interface Drivers {

    /** Runs {@code work} with a driver; {@code work} may ask for only the role it uses ({@code (ContainerSetup d) -> ...}). */
    <T> T with(Function<? super GatunDriver, T> work);

    /** A process of its own: a driver for the namespace it runs in, opened for each work and closed after. */
    Drivers IN_PROCESS = new Drivers() {
        @Override
        public <T> T with(Function<? super GatunDriver, T> work) {
            try (GatunDriver d = Gatun.open(NetworkNamespace.current())) {
                return work.apply(d);
            }
        }
    };

    /** Lends {@code driver} itself, which the caller owns and closes. */
    static Drivers of(GatunDriver driver) {
        return new Drivers() {
            @Override
            public <T> T with(Function<? super GatunDriver, T> work) {
                return work.apply(driver);
            }
        };
    }
}
