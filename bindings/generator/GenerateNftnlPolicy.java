import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Writes core's NftnlExpressionPolicy.java: for every expression libnftnl parses, the kind of
 * each attribute that its parse callback checks with mnl_attr_validate(). libnftnl ends the
 * process (abi_breakage(): exit(1)) when such a check fails, so gatun checks the same kinds
 * before it hands a kernel reply to libnftnl. Read from libnftnl's own source (the version the
 * runtime loads), never typed by hand.
 *
 * <p>Only attribute names that the generated bindings know (kernel_h, libnftnl_h) are kept: an
 * expression libnftnl has and the kernel header does not (a vendor's) is left to the generic
 * checks.
 *
 * <p>Usage: {@code java GenerateNftnlPolicy.java LIBNFTNL_SOURCE_DIR BINDINGS_SOURCE_DIR OUTPUT_FILE}
 */
public final class GenerateNftnlPolicy {

    /** A parse callback: from its signature to the closing brace at the start of a line. */
    private static final Pattern CALLBACK = Pattern.compile("static int \\w+_cb\\(.*?\\n}\\n", Pattern.DOTALL);
    /** Inside one: the attributes of a case, the kind they are validated as, and the break that ends it. */
    private static final Pattern CALLBACK_TOKEN =
            Pattern.compile("case (NFTA_\\w+|NFTNL_EXPR_\\w+):|MNL_TYPE_(\\w+)|break;");
    private static final Pattern NAME = Pattern.compile("\\.name\\s*=\\s*\"(\\w+)\"");
    /** A helper that parses an attribute after the callback and checks it itself, and the kind it checks for. */
    private record Helper(Pattern call, String kind) {}

    /** Matched on the text with whitespace folded, since a call may span lines. */
    private static final List<Helper> HELPERS = List.of(
            new Helper(Pattern.compile("nftnl_parse_data\\([^,]+, ?tb\\[(NFTA_\\w+)\\]"), "DATA"),
            new Helper(Pattern.compile("nftnl_expr_parse\\(tb\\[(NFTA_\\w+)\\]\\)"), "EXPRESSION"),
            new Helper(Pattern.compile("mnl_attr_for_each_nested\\(\\w+, ?tb\\[(NFTA_\\w+)\\]\\)"), "EXPRESSIONS"));

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            System.err.println("usage: GenerateNftnlPolicy LIBNFTNL_SOURCE_DIR BINDINGS_SOURCE_DIR OUTPUT_FILE");
            System.exit(2);
        }
        Path expressions = Path.of(args[0], "src", "expr");
        if (!Files.isDirectory(expressions)) {
            System.err.println("generate-nftnl-policy: " + expressions + " is not a directory: give libnftnl's source tree");
            System.exit(1);
        }
        Path bindings = Path.of(args[1], "dev", "gatun", "bindings", "internal");
        Set<String> known = knownAttributes(bindings.resolve("kernel_h.java"), bindings.resolve("libnftnl_h.java"));
        String source = render(policies(expressions, known));
        Files.writeString(Path.of(args[2]), source, StandardCharsets.UTF_8);
    }

    /** NFTA_* names the kernel header binding has, and the NFTNL_EXPR_* ones a few parsers (osf, synproxy) use. */
    static Set<String> knownAttributes(Path kernelH, Path libnftnlH) throws IOException {
        String kernel = Files.readString(kernelH);
        Set<String> known = new HashSet<>();
        known.addAll(all(Pattern.compile("static int (NFTA_\\w+)\\(\\)"), kernel));
        known.addAll(all(Pattern.compile("int (NFTA_\\w+) = "), kernel));
        known.addAll(all(Pattern.compile("int (NFTNL_EXPR_\\w+) = "), Files.readString(libnftnlH)));
        return known;
    }

    /** Expression name to (attribute to kind), both sorted, for every expression whose attributes are all known. */
    static Map<String, Map<String, String>> policies(Path expressions, Set<String> known) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(expressions)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".c"))
                    .filter(p -> !p.getFileName().toString().equals("data_reg.c"))
                    .sorted()
                    .toList();
        }
        Map<String, Map<String, String>> policies = new TreeMap<>();
        for (Path file : files) {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            Matcher name = NAME.matcher(text);
            if (!name.find()) {
                continue;
            }
            Map<String, String> kinds = kinds(text);
            Map<String, String> kept = new TreeMap<>();
            kinds.forEach((attribute, kind) -> {
                if (known.contains(attribute)) {
                    kept.put(attribute, kind);
                }
            });
            if (!kept.isEmpty() && kept.size() == kinds.size()) {
                policies.put(name.group(1), kept);
            }
        }
        return policies;
    }

    /** Each attribute the file's parser checks, with the kind it is checked as (MNL_TYPE_* without the prefix, or a helper's). */
    static Map<String, String> kinds(String text) {
        Map<String, String> kinds = new LinkedHashMap<>();
        Matcher callback = CALLBACK.matcher(text);
        while (callback.find()) {
            List<String> pending = new ArrayList<>();
            Matcher token = CALLBACK_TOKEN.matcher(callback.group());
            while (token.find()) {
                if (token.group(1) != null) {
                    pending.add(token.group(1));
                } else if (token.group(2) != null) {
                    for (String attribute : pending) {
                        kinds.put(attribute, token.group(2));
                    }
                    pending.clear();
                } else {
                    pending.clear();
                }
            }
        }
        String flat = text.replaceAll("\\s+", " ");
        for (Helper helper : HELPERS) {
            for (String attribute : all(helper.call(), flat)) {
                kinds.put(attribute, helper.kind());
            }
        }
        return kinds;
    }

    static String render(Map<String, Map<String, String>> policies) {
        StringBuilder out = new StringBuilder("""
                package dev.gatun.nft;

                import java.util.Map;

                import static dev.gatun.bindings.internal.kernel_h.*;
                import static dev.gatun.bindings.internal.libnftnl_h.*;
                import static dev.gatun.nft.NftReplyCheck.Kind.*;
                import static java.util.Map.entry;

                /**
                 * Generated by bindings/generate-nftnl-policy from libnftnl's expression parsers; do not edit.
                 * For each expression kind, the kind libnftnl checks each attribute against (and ends the
                 * process when it does not hold).
                 */
                final class NftnlExpressionPolicy {

                    private NftnlExpressionPolicy() {}

                    static final Map<String, Map<Integer, NftReplyCheck.Kind>> BY_NAME = Map.ofEntries(
                """);
        List<String> expressions = new ArrayList<>();
        policies.forEach((name, kinds) -> {
            List<String> entries = new ArrayList<>();
            kinds.forEach((attribute, kind) -> entries.add("entry(" + attribute + ", " + kind + ")"));
            expressions.add("            entry(\"" + name + "\", Map.ofEntries(\n                "
                    + String.join(",\n                ", entries) + "))");
        });
        out.append(String.join(",\n", expressions));
        out.append(");\n}\n");
        return out.toString();
    }

    private static List<String> all(Pattern pattern, String text) {
        List<String> out = new ArrayList<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }
}
