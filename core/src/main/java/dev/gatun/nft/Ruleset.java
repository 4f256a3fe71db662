package dev.gatun.nft;

import java.util.List;
import java.util.Map;

/**
 * What was read back from the kernel: tables, chains, named sets with their elements, and
 * rules, in the kernel's order.
 */
public record Ruleset(List<Table> tables, List<Chain> chains, List<NftSet> sets, Map<String, List<Element>> elements,
                      List<Rule> rules) {

    public Ruleset {
        tables = List.copyOf(tables);
        chains = List.copyOf(chains);
        sets = List.copyOf(sets);
        elements = Map.copyOf(elements);
        rules = List.copyOf(rules);
    }

    /** The elements of a set, by the set's {@link NftSet#describe()}-independent key. */
    public List<Element> elementsOf(NftSet set) {
        return elements.getOrDefault(key(set), List.of());
    }

    /** {@link #elementsOf} as the kernel keeps them (for sets that are not interval sets). */
    public List<StoredElement> storedElementsOf(NftSet set) {
        return ElementValues.encode(set, elementsOf(set), false).stream().map(ElementCodec.Encoded::stored).toList();
    }

    static String key(NftSet set) {
        return set.family() + " " + set.table() + " " + set.name();
    }

    public List<Chain> chainsOf(Table t) {
        return chains.stream().filter(c -> c.family() == t.family() && c.table().equals(t.name())).toList();
    }

    public List<NftSet> setsOf(Table t) {
        return sets.stream().filter(s -> s.family() == t.family() && s.table().equals(t.name())).toList();
    }

    public List<Rule> rulesOf(Chain c) {
        return rules.stream().filter(r -> r.family() == c.family() && r.table().equals(c.table())
                && r.chain().equals(c.name())).toList();
    }
}
