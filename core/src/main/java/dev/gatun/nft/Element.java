package dev.gatun.nft;

import dev.gatun.nft.value.NftNames;
import dev.gatun.nft.value.Verdict;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One element of a set or map, in nft's words: one string per key component ("tcp", "8080"),
 * and for a map one per data component or a verdict. In an interval set a key may be a prefix
 * ("10.0.0.0/8") or a range ("10.0.0.1-10.0.0.9").
 */
public record Element(List<String> key, List<String> data, Verdict verdict, Duration timeout, String comment) {

    public Element {
        key = List.copyOf(key);
        data = data == null ? List.of() : List.copyOf(data);
        for (String k : key) {
            Objects.requireNonNull(k, "key component");
        }
        NftNames.checkComment("element " + String.join(" . ", key), comment);
    }

    public static Element of(String... key) {
        return new Element(List.of(key), List.of(), null, null, null);
    }

    public Element to(String... data) {
        return new Element(key, List.of(data), null, timeout, comment);
    }

    public Element to(Verdict verdict) {
        return new Element(key, List.of(), verdict, timeout, comment);
    }

    public Element withComment(String comment) {
        return new Element(key, data, verdict, timeout, comment);
    }

    public Element withTimeout(Duration timeout) {
        return new Element(key, data, verdict, timeout, comment);
    }

    /** The key as nft writes it: "tcp . 8080". */
    public String describeKey() {
        return String.join(" . ", key);
    }
}
