package dev.gatun.driver;

import dev.gatun.nft.RulesetEvent;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** One line for the changes another process made to gatun's table in one transaction. */
final class OutsideChanges {

    private OutsideChanges() {
    }

    /** "deleted the table inet gatun, 6 chains, 4 sets, 21 rules", "deleted elements of set ports4". */
    static String describe(List<RulesetEvent> events) {
        Map<RulesetEvent.Kind, Set<String>> byKind = new LinkedHashMap<>();
        Map<RulesetEvent.Kind, Integer> counts = new LinkedHashMap<>();
        for (RulesetEvent e : events) {
            byKind.computeIfAbsent(e.kind(), k -> new LinkedHashSet<>()).add(e.name() == null ? "" : e.name());
            counts.merge(e.kind(), 1, Integer::sum);
        }
        List<String> deleted = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (var entry : byKind.entrySet()) {
            int n = counts.get(entry.getKey());
            Set<String> names = entry.getValue();
            switch (entry.getKey()) {
                case DELETE_TABLE -> deleted.add("the table " + events.getFirst().family() + " " + events.getFirst().table());
                case DELETE_CHAIN -> deleted.add(n == 1 ? "chain " + names.iterator().next() : n + " chains");
                case DELETE_SET -> deleted.add(n == 1 ? "set " + names.iterator().next() : n + " sets");
                case DELETE_RULE -> deleted.add(n == 1 ? "a rule" : n + " rules");
                case DELETE_ELEMENTS -> deleted.add("elements of set" + (names.size() == 1 ? " " : "s ")
                        + String.join(", ", names));
                case NEW_RULE -> other.add("added " + (n == 1 ? "a rule" : n + " rules"));
                default -> other.add(entry.getKey().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                        + (n == 1 ? "" : " x" + n));
            }
        }
        List<String> parts = new ArrayList<>();
        if (!deleted.isEmpty()) {
            parts.add("deleted " + String.join(", ", deleted));
        }
        parts.addAll(other);
        return String.join("; ", parts);
    }
}
