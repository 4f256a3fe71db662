package dev.gatun.cli.serve;

import dev.gatun.netns.NamedNamespaces;

import java.util.List;

/**
 * The named network namespaces gatun makes for a moment and removes again (a serve's warm-up,
 * the ahead-of-time caches' training runs), each named after the process that made it. A
 * process killed with SIGKILL runs no clean-up: its namespaces stay until a later one removes
 * them ({@link #removeOrphans}).
 */
public final class ThrowawayNamespaces {

    /** What each kind is for, as its name says: gatun-KIND-PID. */
    static final List<String> KINDS = List.of("warm-up", "warm-up-pod1", "warm-up-pod2", "training-serve", "training-host", "training-c");

    private ThrowawayNamespaces() {}

    /** The name of this process's namespace of {@code kind} (one of {@link #KINDS}). */
    public static String of(String kind) {
        if (!KINDS.contains(kind)) {
            throw new IllegalArgumentException("not a kind of throwaway namespace: " + kind);
        }
        return "gatun-" + kind + "-" + ProcessHandle.current().pid();
    }

    /** Removes the throwaway namespaces whose process is gone. */
    static void removeOrphans() {
        for (String n : NamedNamespaces.list()) {
            Long pid = ownerOf(n);
            if (pid != null && ProcessHandle.of(pid).isEmpty()) {
                NamedNamespaces.delete(n);
            }
        }
    }

    /** The process a throwaway namespace is named after, or null when {@code name} is not one's. */
    static Long ownerOf(String name) {
        for (String kind : KINDS) {
            String prefix = "gatun-" + kind + "-";
            if (name.startsWith(prefix)) {
                String digits = name.substring(prefix.length());
                if (!digits.isEmpty() && digits.length() <= 18 && digits.chars().allMatch(Character::isDigit)) {
                    return Long.parseLong(digits);
                }
            }
        }
        return null;
    }
}
