package dev.gatun.nft;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Writes a {@link Ruleset} in nft syntax: text that {@code nft -f} applies to the same ruleset. */
public final class NftRenderer {

    private NftRenderer() {}

    public static String render(Ruleset ruleset) {
        StringBuilder out = new StringBuilder();
        for (Table t : ruleset.tables()) {
            out.append("table ").append(t.family()).append(' ').append(t.name()).append(" {\n");
            if (t.comment() != null) {
                out.append("\tcomment \"").append(t.comment()).append("\"\n");
            }
            if (!t.flags().isEmpty()) {
                out.append("\tflags ").append(t.flags().stream().sorted().map(TableFlag::keyword)
                        .collect(Collectors.joining(","))).append('\n');
            }
            for (NftSet s : ruleset.setsOf(t)) {
                out.append('\n');
                set(out, s, ruleset.elementsOf(s));
            }
            for (Chain c : ruleset.chainsOf(t)) {
                out.append('\n');
                chain(out, c, ruleset.rulesOf(c));
            }
            out.append("}\n");
        }
        return out.toString();
    }

    /** One rule as an nft line, without its chain. */
    public static String render(Rule rule) {
        return RuleRenderer.render(rule);
    }

    private static void set(StringBuilder out, NftSet s, List<Element> elements) {
        out.append('\t').append(s.isMap() ? "map " : "set ").append(s.name()).append(" {\n");
        out.append("\t\ttype ").append(types(s.keyType()));
        if (s.isMap()) {
            out.append(" : ").append(types(s.dataType()));
        }
        out.append('\n');
        if (!s.flags().isEmpty()) {
            out.append("\t\tflags ").append(s.flags().stream().sorted().map(SetFlag::keyword)
                    .collect(Collectors.joining(","))).append('\n');
        }
        if (s.timeout() != null) {
            out.append("\t\ttimeout ").append(duration(s.timeout())).append('\n');
        }
        if (s.comment() != null) {
            out.append("\t\tcomment \"").append(s.comment()).append("\"\n");
        }
        if (!elements.isEmpty()) {
            List<String> items = new ArrayList<>();
            for (Element e : elements) {
                items.add(element(s, e));
            }
            out.append("\t\telements = { ").append(String.join(",\n\t\t\t     ", items)).append(" }\n");
        }
        out.append("\t}\n");
    }

    private static String element(NftSet s, Element e) {
        StringBuilder b = new StringBuilder();
        List<String> key = new ArrayList<>();
        for (int i = 0; i < e.key().size(); i++) {
            key.add(value(s.keyType().get(i), e.key().get(i)));
        }
        b.append(String.join(" . ", key));
        if (e.timeout() != null) {
            b.append(" timeout ").append(duration(e.timeout()));
        }
        if (e.comment() != null) {
            b.append(" comment \"").append(e.comment()).append('"');
        }
        if (e.verdict() != null) {
            b.append(" : ").append(e.verdict().render());
        } else if (!e.data().isEmpty()) {
            List<String> data = new ArrayList<>();
            for (int i = 0; i < e.data().size(); i++) {
                data.add(value(s.dataType().get(i), e.data().get(i)));
            }
            b.append(" : ").append(String.join(" . ", data));
        }
        return b.toString();
    }

    private static String value(DataType type, String v) {
        return type == DataType.IFNAME ? "\"" + v + "\"" : v;
    }

    private static void chain(StringBuilder out, Chain c, List<Rule> rules) {
        out.append("\tchain ").append(c.name()).append(" {\n");
        if (c.comment() != null) {
            out.append("\t\tcomment \"").append(c.comment()).append("\"\n");
        }
        Chain.Base b = c.base();
        if (b != null) {
            out.append("\t\ttype ").append(b.type().keyword).append(" hook ").append(b.hook().keyword);
            if (b.device() != null) {
                out.append(" device \"").append(b.device()).append('"');
            }
            out.append(" priority ").append(b.priority()).append(';');
            if (b.policy() != null) {
                out.append(" policy ").append(b.policy().keyword()).append(';');
            }
            out.append('\n');
        }
        for (Rule r : rules) {
            out.append("\t\t").append(RuleRenderer.render(r)).append('\n');
        }
        out.append("\t}\n");
    }

    private static String types(List<DataType> types) {
        return types.stream().map(DataType::keyword).collect(Collectors.joining(" . "));
    }

    /** nft's duration syntax, for example 1h30m or 250ms. */
    static String duration(Duration d) {
        long ms = d.toMillis();
        StringBuilder s = new StringBuilder();
        long days = ms / 86_400_000;
        ms %= 86_400_000;
        long hours = ms / 3_600_000;
        ms %= 3_600_000;
        long minutes = ms / 60_000;
        ms %= 60_000;
        long seconds = ms / 1000;
        ms %= 1000;
        if (days > 0) s.append(days).append('d');
        if (hours > 0) s.append(hours).append('h');
        if (minutes > 0) s.append(minutes).append('m');
        if (seconds > 0) s.append(seconds).append('s');
        if (ms > 0 || s.isEmpty()) s.append(ms).append("ms");
        return s.toString();
    }
}
