package dev.gatun.nft;

import dev.gatun.InvalidInputException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * nft's words for the kernel's values of one kind, read both ways: {@link RuleBuilder} turns
 * words into values, {@link RuleRenderer} values back into words, so the two cannot drift apart.
 * The order of the entries is the order in which a set of flags is written.
 */
final class KeywordTable {

    private final Map<String, Integer> byWord = new LinkedHashMap<>();
    private final boolean anyCase;
    private final Function<String, String> unknownWord;

    @SafeVarargs
    private KeywordTable(boolean anyCase, Function<String, String> unknownWord, Map.Entry<String, Integer>... entries) {
        this.anyCase = anyCase;
        this.unknownWord = unknownWord;
        for (Map.Entry<String, Integer> e : entries) {
            if (byWord.put(e.getKey(), e.getValue()) != null) {
                throw new IllegalArgumentException("keyword " + e.getKey() + " appears twice");
            }
        }
    }

    /** Words matched exactly; {@code unknownWord} makes the error message for any other. */
    @SafeVarargs
    static KeywordTable of(Function<String, String> unknownWord, Map.Entry<String, Integer>... entries) {
        return new KeywordTable(false, unknownWord, entries);
    }

    /** Words matched in any case (nft's ct state and ct status words). */
    @SafeVarargs
    static KeywordTable anyCase(Function<String, String> unknownWord, Map.Entry<String, Integer>... entries) {
        return new KeywordTable(true, unknownWord, entries);
    }

    /** The value of {@code word}; an InvalidInputException naming it when there is none. */
    int value(String word) {
        Integer v = byWord.get(anyCase ? word.toLowerCase(Locale.ROOT) : word);
        if (v == null) {
            throw new InvalidInputException(unknownWord.apply(word));
        }
        return v;
    }

    /** The word for {@code value}, or empty when nft has none in this table. */
    Optional<String> word(int value) {
        for (Map.Entry<String, Integer> e : byWord.entrySet()) {
            if (e.getValue() == value) {
                return Optional.of(e.getKey());
            }
        }
        return Optional.empty();
    }

    /** The flags named by {@code words}, or'ed together. */
    int bits(String... words) {
        int bits = 0;
        for (String w : words) {
            bits |= value(w);
        }
        return bits;
    }

    /** The words of the flags set in {@code bits}, in table order, comma-separated; bits without a word are left out. */
    String words(int bits) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Integer> e : byWord.entrySet()) {
            if ((bits & e.getValue()) != 0) {
                out.add(e.getKey());
            }
        }
        return String.join(",", out);
    }
}
