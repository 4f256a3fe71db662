package dev.gatun.driver.bridge;

import java.util.List;
import java.util.Set;

/**
 * Warnings about a state that lasts (another firewall that drops gatun's traffic, one that
 * cannot be opened): each is given out when it first appears, not again at every repair while
 * it stands, and again if it comes back after it went.
 */
final class StandingWarnings {

    private Set<String> standing = Set.of();

    /** Of the warnings that stand {@code now}, those that did not stand before, in their order. */
    synchronized List<String> fresh(List<String> now) {
        List<String> fresh = now.stream().filter(w -> !standing.contains(w)).distinct().toList();
        standing = Set.copyOf(now);
        return fresh;
    }
}
