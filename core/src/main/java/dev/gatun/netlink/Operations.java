package dev.gatun.netlink;

import java.util.function.IntFunction;

/**
 * How errors name the messages of one exchange, by position: made only when an error needs
 * one, so a call that succeeds builds no text.
 */
public record Operations(int count, IntFunction<String> name) {

    public static Operations of(String... names) {
        return new Operations(names.length, i -> names[i]);
    }

    public String get(int index) {
        return name.apply(index);
    }

    /** The first message's name, and how many more there are. */
    String describe() {
        return count == 1 ? get(0) : get(0) + " and " + (count - 1) + " more messages";
    }
}
