package dev.gatun.internal;

import java.util.Optional;
import java.util.function.Predicate;

/** Finding the constant of an enum that stands for a kernel number or an nft keyword. */
public final class Constants {

    private Constants() {}

    /** The first of {@code values} that passes {@code test}, or empty. */
    public static <E> Optional<E> first(E[] values, Predicate<E> test) {
        for (E v : values) {
            if (test.test(v)) {
                return Optional.of(v);
            }
        }
        return Optional.empty();
    }
}
